//! The on-disk cache of compiled kernels (CuPy's scheme). Key: a hash of source,
//! headers, options, architecture, NVRTC version and crate version. Directory:
//! $GPUPRIMS_CACHE_DIR, else $XDG_CACHE_HOME/gpuprims, else ~/.cache/gpuprims;
//! GPUPRIMS_CACHE_DIR=off disables it. Entries are written to a temporary file and
//! renamed; an unreadable or corrupt entry is a miss, and no cache failure is an error.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"GPCUBIN1";

/// FNV-1a, 64-bit, from a given offset basis.
fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for part in parts {
        for &b in part.iter() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate the parts, so ("ab","c") and ("a","bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// 128 bits of key from two FNV-1a passes with different bases, as 32 hex digits.
pub fn cache_key(parts: &[&[u8]]) -> String {
    let a = fnv1a(0xcbf2_9ce4_8422_2325, parts);
    let b = fnv1a(0x6c62_272e_07bb_0142, parts);
    format!("{a:016x}{b:016x}")
}

/// The cache directory, or None when the cache is off or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("GPUPRIMS_CACHE_DIR") {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(|v| PathBuf::from(v).join("gpuprims"))
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gpuprims"))),
    }
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.cubin"))
}

/// The cached CUBIN for `key`, if a valid entry exists.
pub fn load(dir: &Path, key: &str) -> Option<Vec<u8>> {
    let bytes = fs::read(entry_path(dir, key)).ok()?;
    decode(&bytes)
}

/// Stores `cubin` under `key`, silently giving up on any error.
pub fn store(dir: &Path, key: &str, cubin: &[u8]) {
    let _ = (|| -> std::io::Result<()> {
        fs::create_dir_all(dir)?;
        // Unique per process and per write: two contexts may store one key at once.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let nth = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{key}.{}.{nth}.tmp", std::process::id()));
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&encode(cubin))?;
        }
        fs::rename(&tmp, entry_path(dir, key)).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    })();
}

/// MAGIC, payload length (u64 LE), payload checksum (u64 LE), payload.
fn encode(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(0xcbf2_9ce4_8422_2325, &[payload]).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn decode(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < 24 || &bytes[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().ok()?) as usize;
    let sum = u64::from_le_bytes(bytes[16..24].try_into().ok()?);
    let payload = &bytes[24..];
    (payload.len() == len && fnv1a(0xcbf2_9ce4_8422_2325, &[payload]) == sum).then(|| payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpuprims-cache-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn keys_depend_on_every_part_and_on_boundaries() {
        let k = cache_key(&[b"src", b"sm_90"]);
        assert_eq!(k.len(), 32);
        assert_eq!(k, cache_key(&[b"src", b"sm_90"]));
        assert_ne!(k, cache_key(&[b"src", b"sm_80"]));
        assert_ne!(cache_key(&[b"ab", b"c"]), cache_key(&[b"a", b"bc"]));
    }

    #[test]
    fn round_trip_and_corruption_is_a_miss() {
        let dir = temp_dir("rt");
        let key = cache_key(&[b"x"]);
        assert!(load(&dir, &key).is_none());
        store(&dir, &key, b"cubin bytes");
        assert_eq!(load(&dir, &key).unwrap(), b"cubin bytes");
        // Flip a payload byte: the checksum no longer matches.
        let p = entry_path(&dir, &key);
        let mut bytes = fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&p, &bytes).unwrap();
        assert!(load(&dir, &key).is_none());
        // Truncated and garbage files are misses too.
        fs::write(&p, b"GPCUBIN1").unwrap();
        assert!(load(&dir, &key).is_none());
        fs::write(&p, b"garbage").unwrap();
        assert!(load(&dir, &key).is_none());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn unwritable_directory_is_silent() {
        // A file where the directory should be: create_dir_all fails, store shrugs.
        let dir = temp_dir("blocked");
        fs::write(&dir, b"not a directory").unwrap();
        store(&dir.join("sub"), "k", b"data");
        assert!(load(&dir.join("sub"), "k").is_none());
        let _ = fs::remove_file(&dir);
    }
}
