//! A kernel source compiled in parts, side by side on a first call (NVRTC compiles one
//! module on one thread): `-D<define>=<part>` picks the kernels a module holds, and the
//! loader's key of a part carries it above the key widths' bits. select.cu and
//! segmented_topk.cu are split so.

/// How a source is split: its define, how many parts, and which kernels lie outside
/// part 0.
pub struct Parts {
    pub define: &'static str,
    pub count: u32,
    /// (kernel, part) of every kernel not in part 0.
    pub later: &'static [(&'static str, u32)],
}

impl Parts {
    /// Every part.
    pub fn all(&self) -> std::ops::Range<u32> {
        0..self.count
    }

    /// The part holding `kernel`.
    pub fn of(&self, kernel: &str) -> u32 {
        self.later.iter().find(|&&(k, _)| k == kernel).map_or(0, |&(_, part)| part)
    }

    /// The loader's key of `part` of the module whose key is `base`.
    pub fn variant(&self, base: u32, part: u32) -> u32 {
        base | part << 12
    }

    /// The compile option that picks `part`.
    pub fn option(&self, part: u32) -> String {
        format!("-D{}={part}", self.define)
    }
}
