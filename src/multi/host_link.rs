//! The host backend's link: ranks are threads of one process that meet at a
//! rendezvous named by the communicator id. Each exchange is post, barrier, copy,
//! barrier: a rank's posted memory stays valid until every rank has copied from it.
//! A rank that fails marks the rendezvous, and every wait on it ends with an error.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use once_cell::sync::Lazy;

use super::transport::{Link, Transfer};
use crate::backend::Memory;
use crate::error::{invalid, Error, Result};

/// The bytes of a communicator id (NCCL's unique id is 128).
pub(crate) const ID_BYTES: usize = 128;

/// What one rank shows the others during an exchange.
enum Post {
    Bytes(Vec<u8>),
    Ranges { base: SendPtr, ranges: Vec<Range<usize>> },
}

#[derive(Clone, Copy)]
struct SendPtr(*const u8);
// SAFETY: the memory behind it is read only while its owner waits at the barrier.
unsafe impl Send for SendPtr {}

struct State {
    joined: Vec<bool>,
    /// Barrier generation and how many ranks have arrived in it.
    generation: u64,
    arrived: usize,
    posts: Vec<Option<Post>>,
    failed: Option<String>,
}

struct Rendezvous {
    nranks: usize,
    state: Mutex<State>,
    wake: Condvar,
}

/// Rendezvous still gathering ranks, by id.
static OPEN: Lazy<Mutex<HashMap<Vec<u8>, Weak<Rendezvous>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// How long a rank waits for the others before giving up (GPUPRIMS_COMM_TIMEOUT_S).
pub fn timeout() -> Duration {
    let secs = std::env::var("GPUPRIMS_COMM_TIMEOUT_S").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(300);
    Duration::from_secs(secs.max(1))
}

impl Rendezvous {
    fn new(nranks: usize) -> Arc<Rendezvous> {
        Arc::new(Rendezvous {
            nranks,
            state: Mutex::new(State {
                joined: vec![false; nranks],
                generation: 0,
                arrived: 0,
                posts: (0..nranks).map(|_| None).collect(),
                failed: None,
            }),
            wake: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `done` holds, a rank fails, or the timeout passes.
    fn wait_until<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        what: &str,
        done: impl Fn(&State) -> bool,
    ) -> Result<MutexGuard<'a, State>> {
        let deadline = Instant::now() + timeout();
        loop {
            if let Some(why) = &st.failed {
                return Err(Error::Internal(format!("another rank failed ({why}); this communicator is unusable")));
            }
            if done(&st) {
                return Ok(st);
            }
            let now = Instant::now();
            if now >= deadline {
                let why = format!("timed out after {} s waiting for every rank to {what}", timeout().as_secs());
                st.failed = Some(why.clone());
                self.wake.notify_all();
                return Err(Error::Internal(why));
            }
            st = self.wake.wait_timeout(st, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Every rank arrives before any leaves.
    fn barrier<'a>(&'a self, mut st: MutexGuard<'a, State>, what: &str) -> Result<MutexGuard<'a, State>> {
        let generation = st.generation;
        st.arrived += 1;
        if st.arrived == self.nranks {
            st.arrived = 0;
            st.generation += 1;
            self.wake.notify_all();
        }
        self.wait_until(st, what, |s| s.generation != generation)
    }
}

pub struct HostLink {
    rank: usize,
    place: Arc<Rendezvous>,
}

impl HostLink {
    /// Joins the ranks gathering under `id`; returns when all `nranks` have joined.
    pub fn join(id: &[u8], rank: usize, nranks: usize) -> Result<HostLink> {
        let place = {
            let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
            open.retain(|_, w| w.strong_count() > 0);
            match open.get(id).and_then(Weak::upgrade) {
                Some(p) => p,
                None => {
                    let p = Rendezvous::new(nranks);
                    open.insert(id.to_vec(), Arc::downgrade(&p));
                    p
                }
            }
        };
        if place.nranks != nranks {
            return Err(invalid(format!("nranks is {nranks}, but another rank of this id gave {}", place.nranks)));
        }
        let mut st = place.lock();
        if st.joined[rank] {
            return Err(invalid(format!("rank {rank} has already joined this id")));
        }
        st.joined[rank] = true;
        place.wake.notify_all();
        let st = place.wait_until(st, "join", |s| s.joined.iter().all(|&j| j));
        // The id is used up once everyone is in; a later join with it starts afresh.
        OPEN.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        drop(st?);
        Ok(HostLink { rank, place })
    }

    /// `nranks` links joined to each other at once (one process driving every rank).
    pub fn clique(nranks: usize) -> Vec<HostLink> {
        let place = Rendezvous::new(nranks);
        place.lock().joined.iter_mut().for_each(|j| *j = true);
        (0..nranks).map(|rank| HostLink { rank, place: place.clone() }).collect()
    }

    /// Posts, waits for everyone's post, runs `take` on all posts, waits again.
    fn exchange<R>(&self, post: Post, what: &str, take: impl FnOnce(&[Option<Post>]) -> Result<R>) -> Result<R> {
        let place = &self.place;
        let mut st = place.lock();
        st.posts[self.rank] = Some(post);
        let st = place.barrier(st, what)?;
        let got = take(&st.posts);
        let mut st = place.barrier(st, what)?;
        st.posts[self.rank] = None;
        got
    }

    /// One array's part of an all-to-all.
    fn transfer(&self, send: &Memory, send_ranges: &[Range<usize>], recv: &Memory, recv_ranges: &[Range<usize>]) -> Result<()> {
        let base = SendPtr(send.as_host()?.ptr());
        let recv = recv.as_host()?;
        let rank = self.rank;
        self.exchange(Post::Ranges { base, ranges: send_ranges.to_vec() }, "exchange data", |posts| {
            for (i, p) in posts.iter().enumerate() {
                let Some(Post::Ranges { base, ranges }) = p else {
                    return Err(Error::Internal(format!("rank {i} posted no ranges")));
                };
                let (from, to) = (ranges[rank].clone(), recv_ranges[i].clone());
                if from.len() != to.len() || to.end > recv.len_bytes() {
                    return Err(Error::Internal(format!("rank {i} sends {} bytes, rank {rank} expects {}", from.len(), to.len())));
                }
                // SAFETY: rank i's send memory is live until the second barrier, and
                // `to` lies inside this rank's receive memory, which nothing else writes.
                unsafe { std::ptr::copy_nonoverlapping(base.0.add(from.start), recv.ptr().add(to.start), from.len()) };
            }
            Ok(())
        })
    }
}

impl Link for HostLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn nranks(&self) -> usize {
        self.place.nranks
    }

    fn all_gather(&self, local: &[u8]) -> Result<Vec<u8>> {
        self.exchange(Post::Bytes(local.to_vec()), "exchange their plans", |posts| {
            let mut all = Vec::with_capacity(local.len() * posts.len());
            for (i, p) in posts.iter().enumerate() {
                match p {
                    Some(Post::Bytes(b)) if b.len() == local.len() => all.extend_from_slice(b),
                    _ => return Err(Error::Internal(format!("rank {i} posted something else than {} bytes", local.len()))),
                }
            }
            Ok(all)
        })
    }

    fn all_to_all(&self, transfers: &[Transfer]) -> Result<()> {
        transfers.iter().try_for_each(|t| self.transfer(t.send, t.send_ranges, t.recv, t.recv_ranges))
    }

    fn fail(&self, why: &str) {
        let mut st = self.place.lock();
        if st.failed.is_none() {
            st.failed = Some(format!("rank {}: {why}", self.rank));
        }
        self.place.wake.notify_all();
    }
}

/// A fresh id for the host backend: a marker, then bits drawn from the time, the
/// process and a counter (unique within the process, which is all threads need).
pub fn new_id() -> Vec<u8> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut state = nanos ^ ((std::process::id() as u64) << 32) ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut id = b"gpuprims-host-id".to_vec();
    while id.len() < ID_BYTES {
        // splitmix64: spreads the seed over every byte.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        id.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    id.truncate(ID_BYTES);
    id
}
