//! Requests to one local model answered together: a thread owns the model, takes the requests
//! as they come, runs the prompts that arrive together in one pass, then decodes every answer
//! under way one token a step, in one pass for all of them (continuous batching, as the large
//! serving engines do). A request that arrives while others decode joins them at the next
//! step; an answer that ends leaves at once. The weights are read once a step for all the
//! answers, so `-j 8` on the local model runs rows faster than one at a time.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};

use crate::LocalError;
use crate::chat::ChatMessage;
use crate::engine::{GenerateOptions, Generation, Sequence};
use crate::model::LocalModel;

/// The most answers decoded together.
pub const MAX_SEQUENCES: usize = 16;

/// The most positions (prompt and answer limit) the answers under way may reserve together,
/// which bounds the memory of their caches; one answer is always let in, whatever its size.
pub const MAX_RESERVED_TOKENS: usize = 32_768;

/// A request for the model's thread.
pub(crate) struct Job {
    pub messages: Vec<ChatMessage>,
    pub options: GenerateOptions,
    pub events: Sender<Event>,
}

/// What the model's thread sends back: text as it is decoded, then the whole answer.
pub(crate) enum Event {
    /// Sent before a waiting request's prompt is read, to learn whether anyone still waits.
    Starting,
    Text(String),
    Done(Result<Generation, LocalError>),
}

/// An answer under way, and where its text goes.
struct Running {
    sequence: Sequence,
    events: Sender<Event>,
}

/// The model's thread: answers `jobs` until every sender of them is gone.
pub(crate) fn serve(mut model: LocalModel, jobs: &Receiver<Job>) {
    let mut waiting: VecDeque<Running> = VecDeque::new();
    let mut active: Vec<Running> = Vec::new();
    let mut open = true;
    loop {
        if active.is_empty() && waiting.is_empty() {
            match jobs.recv() {
                Ok(job) => take(&model, job, &mut waiting),
                Err(_) => return,
            }
        }
        while open {
            match jobs.try_recv() {
                Ok(job) => take(&model, job, &mut waiting),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => open = false,
            }
        }
        let admitted = admit(&mut waiting, &active);
        if !admitted.is_empty() {
            let mut admitted = admitted;
            let mut sequences: Vec<&mut Sequence> =
                admitted.iter_mut().map(|r| &mut r.sequence).collect();
            match model.prefill(&mut sequences) {
                Ok(()) => active.extend(admitted),
                Err(error) => fail(admitted, &error),
            }
        }
        if active.is_empty() {
            continue;
        }
        let (mut sequences, events): (Vec<&mut Sequence>, Vec<&Sender<Event>>) =
            active.iter_mut().map(|r| (&mut r.sequence, &r.events)).unzip();
        let mut gone = Vec::new();
        let stepped = model.step(&mut sequences, &mut |index, text| {
            if events[index].send(Event::Text(text.to_owned())).is_err() {
                gone.push(index);
            }
        });
        if let Err(error) = stepped {
            fail(std::mem::take(&mut active), &error);
            continue;
        }
        for index in gone {
            // Its client left: the answer stops, and its place goes to another.
            active[index].sequence.cancel();
        }
        let (done, going): (Vec<Running>, Vec<Running>) =
            active.drain(..).partition(|r| r.sequence.finished());
        active = going;
        for Running { sequence, events } in done {
            model.keep_finished(&sequence);
            let generation = sequence.into_generation(&mut |text| {
                let _ = events.send(Event::Text(text.to_owned()));
            });
            let _ = events.send(Event::Done(Ok(generation)));
        }
    }
}

/// Makes `job` a sequence waiting its turn, or tells its sender why it cannot be one.
fn take(model: &LocalModel, job: Job, waiting: &mut VecDeque<Running>) {
    match model.sequence(&job.messages, &job.options) {
        Ok(sequence) => waiting.push_back(Running { sequence, events: job.events }),
        Err(error) => {
            let _ = job.events.send(Event::Done(Err(error)));
        }
    }
}

/// The waiting sequences that fit beside `active`, first come first in.
fn admit(waiting: &mut VecDeque<Running>, active: &[Running]) -> Vec<Running> {
    let mut reserved: usize = active.iter().map(|r| r.sequence.reserved_tokens()).sum();
    let mut count = active.len();
    let mut admitted = Vec::new();
    while let Some(next) = waiting.front() {
        if next.events.send(Event::Starting).is_err() {
            // Its client left while it waited: its prompt is never read.
            waiting.pop_front();
            continue;
        }
        let size = next.sequence.reserved_tokens();
        let fits = count < MAX_SEQUENCES && reserved + size <= MAX_RESERVED_TOKENS;
        if !fits && count > 0 {
            break;
        }
        reserved += size;
        count += 1;
        admitted.extend(waiting.pop_front());
    }
    admitted
}

/// Tells every one of `running` that the model failed.
fn fail(running: Vec<Running>, error: &LocalError) {
    let message = match error {
        LocalError::Model(message) => message.clone(),
        other => other.to_string(),
    };
    for Running { events, .. } in running {
        let _ = events.send(Event::Done(Err(LocalError::Model(message.clone()))));
    }
}
