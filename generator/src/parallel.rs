//! Independent pieces of work on every core, with results in a fixed order.
//!
//! Generation is a few large independent jobs (one per generated file, one per CRD), so a
//! shared queue served by one thread per core is all the scheduling it needs. Results come
//! back in the order of the inputs whatever thread ran them, so output stays
//! deterministic. `syn` and `proc_macro2` values cannot cross threads (and spans refer to
//! a per-thread source map), so each job parses and renders what it needs on its own.

use std::sync::Mutex;

/// The stack of every thread a run works on. Reading, resolving and rendering recurse as
/// deep as the input nests, which the input limits bound (`read::MAX_SOURCE_NESTING` for
/// a file's tokens, `resolve::MAX_TYPE_NESTING` for the types below a kind). At those
/// limits an unoptimised build (a build.rs runs one) needed at most 16 MiB (a field of 250
/// nested `Vec`s, and a chain of 84 `Option<struct>`, each 253 levels deep, generated):
/// this is 4 times that. A thread's stack is reserved, not
/// allocated: only what the run touches costs memory. Spawned threads get 2 MiB otherwise,
/// and the calling thread has what its caller gave it (2 MiB in a test, 8 MiB on a main
/// thread), so a run never works on a thread it did not size: see `with_stack`.
pub const STACK_SIZE: usize = 64 << 20;

/// `f()` on a thread of [`STACK_SIZE`], as every run's entry point calls it; a panic in
/// `f` is re-raised here with its own payload.
///
/// # Errors
/// When the thread cannot be started (the system refuses the stack).
pub fn with_stack<R: Send>(f: impl FnOnce() -> R + Send) -> std::io::Result<R> {
    thread_local! {
        /// This thread is one `with_stack` started.
        static ON_RUN_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    // Already on one (an importer checking its port with `generate`): no second thread,
    // whose allocator arena would keep the memory the first one freed.
    if ON_RUN_STACK.get() {
        return Ok(f());
    }
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("kube-codegen".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, || {
                ON_RUN_STACK.set(true);
                f()
            })?;
        Ok(worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// Threads to use: `KUBE_CODEGEN_THREADS` if set to a positive number, else the cores
/// this process may run on.
pub fn threads() -> usize {
    std::env::var("KUBE_CODEGEN_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `items.map(f)`, on up to [`threads`] threads (the calling one included, which is a
/// [`with_stack`] thread in a run; the others get [`STACK_SIZE`] too). Items are taken in
/// order, so put the costliest first. A panic in `f` is re-raised here, with its own
/// payload, once every thread has stopped. A helper thread the system refuses leaves its
/// share to the others.
pub fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let n = threads().min(items.len());
    if n <= 1 {
        return items.into_iter().map(f).collect();
    }
    let len = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..len).map(|_| None).collect());
    let work = || {
        loop {
            // The lock is released before the work starts.
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, item)) = next else { break };
            let r = f(item);
            results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        }
    };
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..n)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("kube-codegen".into())
                    .stack_size(STACK_SIZE)
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        work();
        for h in helpers {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every item was processed"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_input_order() {
        let out = map((0..200).collect(), |i: u64| {
            // Uneven work, so threads finish out of order.
            let spin = (0..(i % 7) * 1000).fold(0u64, |a, b| a.wrapping_add(b));
            std::hint::black_box(spin);
            i * 2
        });
        assert_eq!(out, (0..200).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn empty_and_single() {
        assert!(map(Vec::<u8>::new(), |x| x).is_empty());
        assert_eq!(map(vec![3], |x: i32| x + 1), vec![4]);
    }

    #[test]
    fn reraises_the_panic_payload() {
        let r = std::panic::catch_unwind(|| {
            map((0..8).collect(), |i: i32| {
                if i == 5 {
                    panic!("job {i} failed");
                }
                i
            })
        });
        let payload = r.expect_err("panics");
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        // With one core the panic comes straight from the map; either way the message is kept.
        assert_eq!(msg, "job 5 failed");
    }
}
