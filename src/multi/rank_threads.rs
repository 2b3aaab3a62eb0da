//! One thread a rank, kept for the life of a group: every group call runs each rank's
//! part at once on its own thread (the parts meet in collectives, so none may wait for
//! another to end). Spawning the threads a call cost tens of microseconds a rank, as
//! much as a small call's whole work.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

use crate::error::{internal, Result};

type Job = Box<dyn FnOnce() + Send + 'static>;

pub struct RankThreads {
    queues: Vec<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    /// One run at a time: two runs' parts interleaved on the queues would meet each
    /// other's collectives.
    one_run: Mutex<()>,
}

/// A rank's part and where its result goes. Fields drop in order, so a part dropped
/// unrun is gone before its sender, and `run` (which waits for every sender) cannot
/// return while the part's borrows are still alive.
struct Part<'a, R> {
    part: Box<dyn FnOnce() -> Result<R> + Send + 'a>,
    done: Sender<(usize, Result<R>)>,
}

/// The results' receiver, drained when dropped: however `run` ends, it waits for every
/// part it sent first (as std::thread::scope does).
struct Results<R>(Receiver<(usize, Result<R>)>);

impl<R> Drop for Results<R> {
    fn drop(&mut self) {
        while self.0.recv().is_ok() {}
    }
}

impl RankThreads {
    pub fn new(nranks: usize) -> Result<RankThreads> {
        let mut queues = Vec::with_capacity(nranks);
        let mut threads = Vec::with_capacity(nranks);
        for rank in 0..nranks {
            let (queue, jobs) = channel::<Job>();
            let thread = std::thread::Builder::new()
                .name(format!("gpuprims-rank-{rank}"))
                .spawn(move || jobs.iter().for_each(|job| job()))
                .map_err(|e| internal(format!("starting the thread of rank {rank}: {e}")))?;
            queues.push(queue);
            threads.push(thread);
        }
        Ok(RankThreads { queues, threads, one_run: Mutex::new(()) })
    }

    /// Runs `parts[r]` on rank r's thread, all at once, and returns their results in
    /// rank order once every part has ended (a part that panicked gives an error).
    pub fn run<'a, R: Send + 'a>(&self, parts: Vec<Box<dyn FnOnce() -> Result<R> + Send + 'a>>) -> Vec<Result<R>> {
        assert_eq!(parts.len(), self.queues.len(), "one part a rank");
        let _one = self.one_run.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rank) = self.threads.iter().position(|t| t.is_finished()) {
            // Sending the others their parts would leave them waiting for this rank.
            return (0..parts.len()).map(|_| Err(internal(format!("the thread of rank {rank} is gone")))).collect();
        }
        let (done, results) = channel::<(usize, Result<R>)>();
        let results = Results(results);
        for (rank, (part, queue)) in parts.into_iter().zip(&self.queues).enumerate() {
            let p = Part { part, done: done.clone() };
            let job: Box<dyn FnOnce() + Send + 'a> = Box::new(move || {
                let Part { part, done } = p;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(part))
                    .unwrap_or_else(|_| Err(internal(format!("rank {rank}'s part panicked"))));
                let _ = done.send((rank, r));
            });
            // SAFETY: the job borrows for 'a only, and this function does not return
            // (nor unwind) before every job has ended or been dropped: `results` waits
            // for every clone of `done`, one a job, to be gone (see Part, Results).
            let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
            // A queue whose thread is gone hands the job back, and it is dropped here.
            let _ = queue.send(job);
        }
        drop(done);
        let mut out: Vec<Option<Result<R>>> = (0..self.queues.len()).map(|_| None).collect();
        for (rank, r) in results.0.iter() {
            out[rank] = Some(r);
        }
        out.into_iter()
            .enumerate()
            .map(|(rank, r)| r.unwrap_or_else(|| Err(internal(format!("the thread of rank {rank} is gone")))))
            .collect()
    }
}

impl Drop for RankThreads {
    fn drop(&mut self) {
        self.queues.clear(); // each thread's loop ends when its queue closes
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn parts_run_at_once_and_results_come_in_rank_order() {
        let threads = RankThreads::new(4).unwrap();
        for round in 0..3u64 {
            // Every part waits for all four: this ends only if they run at once.
            let meet = Barrier::new(4);
            let parts: Vec<Box<dyn FnOnce() -> Result<u64> + Send + '_>> =
                (0..4u64).map(|r| Box::new({ let meet = &meet; move || { meet.wait(); Ok(round * 10 + r) } }) as _).collect();
            let got: Vec<u64> = threads.run(parts).into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(got, (0..4).map(|r| round * 10 + r).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_panicking_part_is_an_error_and_the_thread_lives_on() {
        let threads = RankThreads::new(2).unwrap();
        let parts: Vec<Box<dyn FnOnce() -> Result<u32> + Send>> = vec![Box::new(|| Ok(1)), Box::new(|| panic!("on purpose"))];
        let got = threads.run(parts);
        assert_eq!(*got[0].as_ref().unwrap(), 1);
        assert!(got[1].as_ref().unwrap_err().to_string().contains("rank 1's part panicked"));
        let again: Vec<Box<dyn FnOnce() -> Result<u32> + Send>> = vec![Box::new(|| Ok(3)), Box::new(|| Ok(4))];
        assert_eq!(threads.run(again).into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(), vec![3, 4]);
    }
}
