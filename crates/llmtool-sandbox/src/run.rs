//! One run of a smart tool: a fresh instance of CPython on its own thread, given the job on
//! its stdin, with no environment, no network, no host folder but the run's scratch folder,
//! and limits on CPU time, memory, output and model calls. The calling task answers the
//! guest's `llm()` requests meanwhile; time spent waiting for a model is not CPU time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use wasmtime::{Store, StoreLimits, StoreLimitsBuilder, Trap, UpdateDeadline};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::pipes::{Inbox, Outbox, Printed};
use crate::{Failure, Folders, Frame, Job, Limits, LlmCall, LlmHost, Python, Ran, SandboxError};

/// The program the guest runs: reads the job, runs the code, answers on stdout.
const GUEST: &str = include_str!("guest.py");

/// What one instance holds: its WASI context and its memory limits.
pub(crate) struct Guest {
    pub(crate) wasi: WasiP1Ctx,
    limits: StoreLimits,
}

/// How the guest's program ended, as the engine saw it.
enum Exit {
    Finished,
    Code(i32),
    OutOfTime,
    Cancelled,
    StackExhausted,
    Trapped(String),
}

/// The guest's CPU time: wall time since it started, less the time it waited for models.
struct Clock {
    started: Instant,
    waited: Mutex<(Duration, Option<Instant>)>,
}

impl Clock {
    fn new() -> Self {
        Self { started: Instant::now(), waited: Mutex::new((Duration::ZERO, None)) }
    }

    fn waiting(&self, now: bool) {
        let mut waited = self.waited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match (now, waited.1) {
            (true, None) => waited.1 = Some(Instant::now()),
            (false, Some(since)) => *waited = (waited.0 + since.elapsed(), None),
            _ => {}
        }
    }

    fn used(&self) -> Duration {
        let waited = self.waited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiting = waited.1.map_or(Duration::ZERO, |since| since.elapsed());
        self.started.elapsed().saturating_sub(waited.0 + waiting)
    }
}

/// A message the guest writes on its stdout.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Llm(LlmCall),
    Result(String),
    Failed(Raised),
}

#[derive(Deserialize)]
struct Raised {
    #[serde(rename = "type")]
    kind: String,
    message: String,
    frames: Vec<Frame>,
}

/// Sets the flag when the run's future is dropped, so that the guest stops at its next tick.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Python {
    /// Runs `job` under `limits`, with `folders` (a scratch folder, the requirements' site
    /// folder) the only host folders it can see, and `host` answering its `llm()` calls.
    ///
    /// The error is the host's problem (no thread, no scratch folder); everything the code
    /// does, including failing, is in [`Ran::result`].
    pub async fn run(
        &self,
        job: &Job,
        limits: &Limits,
        folders: Folders<'_>,
        host: &dyn LlmHost,
    ) -> Result<Ran, SandboxError> {
        let inbox = Inbox::default();
        let outbox = Outbox::new(limits.result_bytes.saturating_add(64 << 10));
        let printed = Printed::new(limits.printed_bytes);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdin(inbox.clone())
            .stdout(outbox.clone())
            .stderr(printed.clone())
            .args(&["python", "-c", GUEST])
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let mounts = [
            (folders.scratch, "/scratch", FsPerms::ReadWrite),
            (folders.site, "/site", FsPerms::ReadOnly),
        ];
        for (dir, guest, perms) in mounts {
            let Some(dir) = dir else { continue };
            wasi.preopened_dir(dir, guest, perms).map_err(|e| SandboxError::Scratch {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            })?;
        }
        let memory = usize::try_from(limits.memory).unwrap_or(usize::MAX);
        let guest = Guest {
            wasi: wasi.build_p1(),
            limits: StoreLimitsBuilder::new().memory_size(memory).instances(1).build(),
        };
        let job_line = serde_json::json!({
            "code": job.code,
            "variables": job.variables,
            "site": folders.site.is_some(),
        });
        inbox.send_line(&job_line.to_string());

        let clock = Arc::new(Clock::new());
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(cancelled.clone());
        let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
        let timed_out = Arc::new(AtomicBool::new(false));
        let start = StartGuest {
            pre: self.pre.clone(),
            engine: self.engine,
            guest,
            clock: clock.clone(),
            cpu: limits.cpu,
            cancelled: cancelled.clone(),
            timed_out: timed_out.clone(),
        };
        std::thread::Builder::new()
            .name("llmtool-sandbox".into())
            .spawn(move || {
                let _ = done_tx.send(start.run());
            })
            .map_err(|e| SandboxError::Engine { reason: format!("no thread to run in: {e}") })?;

        let mut outcome: Option<Result<String, Failure>> = None;
        let mut llm_calls = 0u32;
        let exit = loop {
            tokio::select! {
                exit = &mut done_rx => break exit.unwrap_or(Exit::Trapped("the runtime stopped".into())),
                () = outbox.written() => {}
            }
            while let Some(line) = outbox.take_line() {
                match serde_json::from_str::<Message>(&line) {
                    Ok(Message::Llm(call)) if outcome.is_none() => {
                        llm_calls += 1;
                        let reply = if llm_calls > limits.llm_calls {
                            serde_json::json!({ "error": format!("the tool may call llm() at most {} times", limits.llm_calls) })
                        } else {
                            clock.waiting(true);
                            let answer = host.call(call).await;
                            clock.waiting(false);
                            match answer {
                                Ok(answer) => serde_json::json!({ "answer": answer }),
                                Err(error) => serde_json::json!({ "error": error }),
                            }
                        };
                        inbox.send_line(&reply.to_string());
                    }
                    Ok(Message::Result(text)) if outcome.is_none() => {
                        outcome = Some(if text.len() > limits.result_bytes {
                            Err(Failure::TooMuchOutput { limit: limits.result_bytes })
                        } else {
                            Ok(text)
                        });
                    }
                    Ok(Message::Failed(raised)) if outcome.is_none() => {
                        outcome = Some(Err(failure_of(raised, limits)));
                    }
                    // A line that is not a message, or anything after the result, is the
                    // code writing to the real stdout: it changes nothing.
                    _ => {}
                }
            }
        };
        inbox.close();
        let result = match (exit, outcome) {
            (Exit::OutOfTime, _) => Err(Failure::OutOfTime { limit: limits.cpu }),
            (Exit::Cancelled, _) => Err(Failure::Cancelled),
            (_, Some(outcome)) => outcome,
            (_, None) if outbox.overflowed() => {
                Err(Failure::TooMuchOutput { limit: limits.result_bytes })
            }
            (Exit::StackExhausted, None) => Err(Failure::StackExhausted),
            (Exit::Finished | Exit::Code(0), None) => {
                Err(Failure::Crashed { reason: "the runtime ended without a result".into() })
            }
            (Exit::Code(code), None) => Err(Failure::Crashed {
                reason: format!("the runtime ended with exit code {code} and no result"),
            }),
            (Exit::Trapped(reason), None) => Err(Failure::Crashed { reason }),
        };
        let (printed, printed_dropped) = printed.take();
        Ok(Ran {
            result,
            printed,
            printed_dropped,
            llm_calls: llm_calls.min(limits.llm_calls),
            cpu: clock.used(),
            wall: clock.started.elapsed(),
        })
    }
}

/// What a [`Failure`] a Python exception is: a `MemoryError` is the memory limit.
fn failure_of(raised: Raised, limits: &Limits) -> Failure {
    match raised.kind.as_str() {
        "MemoryError" => Failure::OutOfMemory { limit: limits.memory },
        "NoExecute" => Failure::NoExecute,
        _ => Failure::Raised { kind: raised.kind, message: raised.message, frames: raised.frames },
    }
}

/// Everything the guest's thread needs.
struct StartGuest {
    pre: wasmtime::InstancePre<Guest>,
    engine: &'static wasmtime::Engine,
    guest: Guest,
    clock: Arc<Clock>,
    cpu: Duration,
    cancelled: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
}

impl StartGuest {
    /// Runs the guest's `_start` to its end on this thread, with its own small executor for
    /// the WASI streams.
    fn run(self) -> Exit {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => return Exit::Trapped(format!("no executor: {e}")),
        };
        let StartGuest { pre, engine, guest, clock, cpu, cancelled, timed_out } = self;
        let mut store = Store::new(engine, guest);
        store.limiter(|guest| &mut guest.limits);
        store.set_epoch_deadline(1);
        let stop = timed_out.clone();
        store.epoch_deadline_callback(move |_| {
            if cancelled.load(Ordering::Relaxed) {
                return Ok(UpdateDeadline::Interrupt);
            }
            if clock.used() > cpu {
                stop.store(true, Ordering::Relaxed);
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Continue(1))
        });
        let ended = runtime.block_on(async {
            let instance = pre.instantiate_async(&mut store).await?;
            let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
            start.call_async(&mut store, ()).await
        });
        match ended {
            Ok(()) => Exit::Finished,
            Err(error) => {
                if let Some(exit) = error.downcast_ref::<I32Exit>() {
                    Exit::Code(exit.0)
                } else if let Some(trap) = error.downcast_ref::<Trap>() {
                    match trap {
                        Trap::Interrupt if timed_out.load(Ordering::Relaxed) => Exit::OutOfTime,
                        Trap::Interrupt => Exit::Cancelled,
                        Trap::StackOverflow => Exit::StackExhausted,
                        other => Exit::Trapped(format!("the runtime stopped: {other}")),
                    }
                } else {
                    Exit::Trapped(error.to_string())
                }
            }
        }
    }
}
