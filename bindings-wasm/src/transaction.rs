//! `transactionRun`: the core's failure transaction
//! ([`ojs_retry::transaction`]) for a queue integration, as the JS layer's
//! `runTransaction` calls it.
//!
//! Total on runtime data, as the core is: what the job carried (its layer,
//! its state, details, a job payload) is handed to the core as it is — a
//! value the reader cannot read becomes the core's `Layer::Unreadable`, a
//! fault the core turns into an outcome and a note, never an error here.
//! Only what the queue's own code passes wrongly (an attempt or `now` that
//! is not a number, a history limit that is not an integer) is an error.
//! The failure's texts arrive as strings the framework already made
//! well-formed (each lone surrogate one U+FFFD, in both builds).

use ojs_retry::transaction::{FailureReport, Transaction};
use ojs_retry::{Error, ErrorCode, Layer};

use crate::fw::{self, Core, Result, Thrown, Val, ret};
use crate::read::{self, De, Host, Prim, Shape};

/// A carried document: JSON text, or a value read by the JS reader; absent
/// for `undefined` and `null`. What cannot be read is the core's to report.
fn carried<H: Host>(h: &H, v: H::V) -> Option<Layer<'static>> {
    match h.prim(&v) {
        Ok(Prim::Undefined | Prim::Null) => None,
        Ok(Prim::String(units))
            if read::check_units(ErrorCode::InvalidArgument, "", units).is_ok() =>
        {
            match h.text(&v) {
                Ok(Some(text)) => Some(Layer::Json(text.into())),
                // A lone surrogate, or the caller's code threw: the
                // reader's fault for it.
                _ => Some(Layer::read(De(h, v))),
            }
        }
        _ => Some(Layer::read(De(h, v))),
    }
}

/// The queue's defaults: one layer, or an array of them (holes skipped).
fn defaults<H: Host>(h: &H, v: H::V) -> Core<Vec<Layer<'static>>> {
    let array = match h.prim(&v) {
        Ok(Prim::Object) => h.shape(&v).ok(),
        _ => None,
    };
    if let Some(Shape::Array(len)) = array {
        ojs_retry::limits::check_argument_len("defaults", len)?;
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let layer = match h.own_at(&v, i) {
                Ok(item) => carried(h, item),
                Err(message) => Some(Layer::Unreadable(ojs_retry::Fault {
                    field: None,
                    path: None,
                    message,
                })),
            };
            out.extend(layer);
        }
        return Ok(out);
    }
    Ok(carried(h, v).into_iter().collect())
}

/// The attempt from the queue's counter, as the core takes it: a negative
/// or huge count is the core's to note; only a value that is not an
/// integer is an error.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::float_cmp
)]
fn counter<H: Host>(h: &H, v: &H::V) -> Core<u64> {
    match h.prim(v) {
        // `as` saturates: a count beyond u64 is u64::MAX, noted by the core.
        Ok(Prim::Number(x)) if x.is_finite() && x.trunc() == x => Ok(x.max(0.0) as u64),
        Ok(Prim::BigInt) => {
            let i = h
                .bigint(v)
                .map_err(|m| Error::invalid_argument("attempt", m))?;
            Ok(u64::try_from(i.max(0)).unwrap_or(u64::MAX))
        }
        _ => Err(Thrown::from(Error::invalid_argument(
            "attempt",
            format!(
                "expected an integer number (the queue's attempt counter), found {}",
                read::type_name(h, v)
            ),
        ))),
    }
}

/// The failure transaction: what a queue knows when a job fails (see the
/// JS layer's `runTransaction`), to the outcome as JSON text —
/// `{"pattern", "state_json", "policy_json", "notes": [{"kind",
/// "message"}], "dead_letter"}` — with the decision written into `out` as
/// `policyDecide` writes it. `clock` is the JS layer's clock, for a `now`
/// left `undefined`.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    napi_derive::napi(js_name = "transactionRun")
)]
#[cfg_attr(
    target_arch = "wasm32",
    wasm_bindgen::prelude::wasm_bindgen(js_name = "transactionRun")
)]
pub fn transaction_run(
    attempt: Val,
    defaults: Val,
    layer: Val,
    state: Val,
    details: Val,
    ancestors: Val,
    job: Val,
    now: Val,
    history_limit: Val,
    key: String,
    queue: Option<String>,
    error_type: Option<String>,
    code: Option<String>,
    timed_out: Option<bool>,
    message: Option<String>,
    clock: f64,
    ctx: Val,
    out: fw::Slots,
) -> Result<String> {
    let h = fw::host(&ctx);
    ret((|| {
        let attempt = counter(&h, &attempt)?;
        let now = if read::is_undefined(&h, &now) {
            ojs_retry::uint_from_f64("now", clock)?
        } else {
            read::uint_arg(&h, &now, "now")?
        };
        let limit = if read::is_undefined(&h, &history_limit) {
            ojs_retry::state::MIN_HISTORY
        } else {
            let n = read::uint_arg(&h, &history_limit, "historyLimit")?;
            ojs_retry::state::check_history_limit(usize::try_from(n).unwrap_or(usize::MAX))?
        };
        let defaults = self::defaults(&h, defaults)?;
        let queue = queue.unwrap_or_default();
        let mut t = Transaction::new(&defaults, attempt, &key, now);
        t.layer = carried(&h, layer);
        t.state = carried(&h, state);
        t.history_limit = limit;
        t.queue = &queue;
        t.failure = FailureReport {
            error_type,
            ancestors: value(&h, ancestors),
            code,
            timed_out: timed_out.unwrap_or(false),
            message,
            details: value(&h, details),
        };
        // The job payload goes only into a dead letter's record, and reading
        // a live value costs calls into JS: it is read for a dead letter
        // only. The transaction is pure (the same inputs, `now` and key give
        // the same outcome), so running it again with the payload gives the
        // same outcome with the payload in its record.
        let again = match h.prim(&job) {
            Ok(Prim::Undefined | Prim::Null) => None,
            _ => Some(t.clone()),
        };
        let mut o = t.run();
        if let (ojs_retry::Action::DeadLetter, Some(mut t)) = (o.decision.action, again) {
            t.job = value(&h, job);
            o = t.run();
        }
        let pattern = crate::out::decision(&o.decision, out)?;
        let text = serde_json::to_string(&Written {
            pattern,
            state_json: &o.state_json,
            policy_json: &o.policy.to_json(),
            notes: &o.notes,
            dead_letter: o.dead_letter.as_deref(),
        });
        // Strings and the notes' strings: serialising cannot fail.
        Ok(text.unwrap_or_default())
    })())
}

/// The outcome's parts the JS layer takes from text (the decision is
/// written into the slots).
#[derive(serde::Serialize)]
struct Written<'a> {
    pattern: Option<String>,
    state_json: &'a str,
    policy_json: &'a str,
    notes: &'a [ojs_retry::transaction::Note],
    dead_letter: Option<&'a str>,
}

/// A value the core reads as it is (details, a job payload); absent for
/// `undefined` and `null`.
fn value<H: Host>(h: &H, v: H::V) -> Option<Layer<'static>> {
    match h.prim(&v) {
        Ok(Prim::Undefined | Prim::Null) => None,
        _ => Some(Layer::read(De(h, v))),
    }
}
