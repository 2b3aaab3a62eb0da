//! Compiling a kernel source to CUBIN with NVRTC, for one exact architecture.

use std::ffi::{c_char, CString};

use cudarc::nvrtc::sys::{self, nvrtcResult};

use super::sources::HEADERS;
use crate::error::{Error, Result};

fn check(r: nvrtcResult, what: &str) -> Result<()> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Compile(format!("{what} failed: {r:?}")))
    }
}

/// Fails with a clear message when libnvrtc cannot be loaded.
/// For tests that need NVRTC but no GPU: whether it is there. Absent, the test skips,
/// unless GPUPRIMS_REQUIRE_NVRTC=1 (CI sets it), which makes absence a failure.
#[cfg(test)]
pub fn available_for_tests() -> bool {
    if require_nvrtc().is_ok() {
        return true;
    }
    assert!(
        std::env::var("GPUPRIMS_REQUIRE_NVRTC").as_deref() != Ok("1"),
        "GPUPRIMS_REQUIRE_NVRTC=1 but libnvrtc.so.13 cannot be loaded"
    );
    eprintln!("skipped: NVRTC not found");
    false
}

pub fn require_nvrtc() -> Result<()> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::Compile(
            "NVRTC (libnvrtc.so.13) was not found: install the CUDA 13 runtime compiler \
             and put it on the loader path"
                .into(),
        ))
    }
}

/// "major.minor" of the loaded NVRTC.
pub fn version() -> Result<String> {
    require_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-pointers.
    check(unsafe { sys::nvrtcVersion(&mut major, &mut minor) }, "nvrtcVersion")?;
    Ok(format!("{major}.{minor}"))
}

/// What a compilation produced: the CUBIN and NVRTC's log (warnings; empty when clean).
pub struct Compiled {
    pub cubin: Vec<u8>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub log: String,
}

/// Compiles `source` (named `name`) with `options`, for `arch` ("sm_90").
pub fn compile(name: &str, source: &str, arch: &str, options: &[String]) -> Result<Compiled> {
    require_nvrtc()?;
    let c = |s: &str| CString::new(s).map_err(|_| Error::Internal(format!("NUL byte in {s:?}")));
    let src = c(source)?;
    let cname = c(name)?;
    let header_texts: Vec<CString> = HEADERS.iter().map(|(_, t)| c(t)).collect::<Result<_>>()?;
    let header_names: Vec<CString> = HEADERS.iter().map(|(n, _)| c(n)).collect::<Result<_>>()?;
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|s| s.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();

    let mut all_options = vec![format!("--gpu-architecture={arch}"), "-std=c++17".to_string()];
    all_options.extend(options.iter().cloned());
    all_options.extend(super::launch::programmatic_define().map(str::to_string));
    let opts: Vec<CString> = all_options.iter().map(|o| c(o)).collect::<Result<_>>()?;
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|s| s.as_ptr()).collect();

    let mut prog = std::ptr::null_mut();
    // SAFETY: all strings outlive the program; counts match the arrays.
    unsafe {
        check(
            sys::nvrtcCreateProgram(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                HEADERS.len() as i32,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            ),
            "nvrtcCreateProgram",
        )?;
        let compiled = sys::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
        let log = program_log(prog);
        let result = if compiled != nvrtcResult::NVRTC_SUCCESS {
            Err(Error::Compile(format!("{name} ({}) did not compile for {arch}:\n{log}", options.join(" "))))
        } else {
            cubin(prog).map(|cubin| Compiled { cubin, log })
        };
        sys::nvrtcDestroyProgram(&mut prog);
        result
    }
}

unsafe fn program_log(prog: sys::nvrtcProgram) -> String {
    let mut size = 0usize;
    if sys::nvrtcGetProgramLogSize(prog, &mut size) != nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    if sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) != nvrtcResult::NVRTC_SUCCESS {
        return String::new();
    }
    String::from_utf8_lossy(&buf).trim_end_matches('\0').trim().to_string()
}

unsafe fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>> {
    let mut size = 0usize;
    check(sys::nvrtcGetCUBINSize(prog, &mut size), "nvrtcGetCUBINSize")?;
    let mut buf = vec![0u8; size];
    check(sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char), "nvrtcGetCUBIN")?;
    Ok(buf)
}
