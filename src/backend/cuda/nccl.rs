//! NCCL, loaded at run time (as the driver and NVRTC are): the few entry points the
//! multi-rank link uses, declared here from nccl.h (stable since NCCL 2.0). We load
//! the library ourselves rather than through cudarc's NCCL module because its loader
//! looks for libnccl.so and versioned names other than NCCL's soname libnccl.so.2,
//! and panics when none is found; here a missing NCCL is UNSUPPORTED with advice.
//!
//! NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is set before NCCL is first
//! loaded unless the environment already says otherwise, and gpuprims never calls
//! cuMulticastCreate. (The machines this is developed on are shared; a program using
//! multicast can take them out of service.)

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use once_cell::sync::OnceCell;

use crate::error::{unsupported, Error, Result};

pub(super) type NcclComm = *mut c_void;
pub(super) type NcclResult = c_int;
pub(super) const NCCL_SUCCESS: NcclResult = 0;
pub(super) const NCCL_IN_PROGRESS: NcclResult = 7;
pub(super) const NCCL_UINT8: c_int = 1;
pub(super) const NCCL_UINT32: c_int = 3;
pub(super) const NCCL_UINT64: c_int = 5;
/// NCCL has no 16-bit integer type; a send moves bits alike whatever the type.
pub(super) const NCCL_FLOAT16: c_int = 6;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct NcclUniqueId {
    pub internal: [u8; 128],
}

/// The entry points, resolved once.
pub struct Nccl {
    pub get_unique_id: unsafe extern "C" fn(*mut NcclUniqueId) -> NcclResult,
    pub comm_init_rank: unsafe extern "C" fn(*mut NcclComm, c_int, NcclUniqueId, c_int) -> NcclResult,
    pub comm_destroy: unsafe extern "C" fn(NcclComm) -> NcclResult,
    pub comm_abort: unsafe extern "C" fn(NcclComm) -> NcclResult,
    pub comm_get_async_error: unsafe extern "C" fn(NcclComm, *mut NcclResult) -> NcclResult,
    pub all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, NcclComm, *mut c_void) -> NcclResult,
    pub send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, NcclComm, *mut c_void) -> NcclResult,
    pub recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, NcclComm, *mut c_void) -> NcclResult,
    pub group_start: unsafe extern "C" fn() -> NcclResult,
    pub group_end: unsafe extern "C" fn() -> NcclResult,
    pub get_error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
}

// SAFETY: plain function pointers into a library that stays loaded.
unsafe impl Send for Nccl {}
unsafe impl Sync for Nccl {}

/// Where NCCL is looked for: GPUPRIMS_NCCL_LIBRARY (a path), then the soname (the
/// system's, or one already loaded, e.g. by PyTorch or the nvidia-nccl-cu13 wheel).
fn candidates() -> Vec<String> {
    let mut names: Vec<String> = std::env::var("GPUPRIMS_NCCL_LIBRARY").ok().filter(|s| !s.is_empty()).into_iter().collect();
    names.extend(["libnccl.so.2", "libnccl.so"].map(String::from));
    names
}

/// NCCL, loaded on first use; UNSUPPORTED saying what to install when it is absent.
pub fn nccl() -> Result<&'static Nccl> {
    static NCCL: OnceCell<std::result::Result<Nccl, String>> = OnceCell::new();
    NCCL.get_or_init(load).as_ref().map_err(|why| unsupported(why.clone()))
}

fn load() -> std::result::Result<Nccl, String> {
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let names = candidates();
    let handle = names
        .iter()
        .find_map(|n| {
            let c = CString::new(n.as_str()).ok()?;
            // SAFETY: dlopen of a library name; the handle is kept for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            (!h.is_null()).then_some(h)
        })
        .ok_or_else(|| {
            format!(
                "NCCL was not found (tried {}): install NCCL 2 (the libnccl2 package, or `pip install \
                 nvidia-nccl-cu13` and set GPUPRIMS_NCCL_LIBRARY to its lib/libnccl.so.2); the one-GPU API \
                 works without it",
                names.join(", ")
            )
        })?;
    let sym = |name: &str| -> std::result::Result<*mut c_void, String> {
        let c = CString::new(name).expect("no NUL");
        // SAFETY: looks a symbol up in the handle opened above.
        let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
        if p.is_null() {
            Err(format!("the NCCL library found lacks {name} (NCCL 2.x needed)"))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol has the C signature nccl.h declares for it (each transmute's
    // target is its field's declared type).
    #[allow(clippy::missing_transmute_annotations)]
    unsafe {
        Ok(Nccl {
            get_unique_id: std::mem::transmute(sym("ncclGetUniqueId")?),
            comm_init_rank: std::mem::transmute(sym("ncclCommInitRank")?),
            comm_destroy: std::mem::transmute(sym("ncclCommDestroy")?),
            comm_abort: std::mem::transmute(sym("ncclCommAbort")?),
            comm_get_async_error: std::mem::transmute(sym("ncclCommGetAsyncError")?),
            all_gather: std::mem::transmute(sym("ncclAllGather")?),
            send: std::mem::transmute(sym("ncclSend")?),
            recv: std::mem::transmute(sym("ncclRecv")?),
            group_start: std::mem::transmute(sym("ncclGroupStart")?),
            group_end: std::mem::transmute(sym("ncclGroupEnd")?),
            get_error_string: std::mem::transmute(sym("ncclGetErrorString")?),
        })
    }
}

impl Nccl {
    /// Ok, or a driver error naming the call and NCCL's reason.
    pub fn check(&self, r: NcclResult, what: &str) -> Result<()> {
        if r == NCCL_SUCCESS {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any result code.
        let why = unsafe { CStr::from_ptr((self.get_error_string)(r)) }.to_string_lossy().into_owned();
        Err(Error::Driver(format!("{what} failed: NCCL error {r} ({why})")))
    }
}
