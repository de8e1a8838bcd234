//! The wasm build: wasm-bindgen.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::Core;
use crate::read::{Host, Prim, Shape};

/// A JS value an export takes as it is (read by [`crate::read`]).
pub(crate) type Val = JsValue;

/// What an export returns; its error throws the JSON text of
/// [`super::Thrown`].
pub(crate) type Result<T> = std::result::Result<T, JsValue>;

/// A core result as an export's.
pub(crate) fn ret<T>(r: Core<T>) -> Result<T> {
    r.map_err(|t| JsValue::from_str(&t.json()))
}

#[wasm_bindgen]
extern "C" {
    /// The JS layer's readers (`js/host.js`), passed as `ctx`: the ones
    /// that may run the caller's code, every exception caught there (an
    /// exception is the `THROWN` value, described by `lastThrown`). Called
    /// as methods of the frozen object the JS layer made, so no global the
    /// caller may have replaced is looked up.
    #[wasm_bindgen(typescript_type = "unknown")]
    pub type Ctx;
    #[wasm_bindgen(method, catch, structural, js_name = kindOf)]
    fn kind_of(this: &Ctx, v: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = keys)]
    fn keys(this: &Ctx, v: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = own)]
    fn own(this: &Ctx, o: &JsValue, k: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = ownAt)]
    fn own_at(this: &Ctx, o: &JsValue, i: u32) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = lastThrown)]
    fn last_thrown(this: &Ctx) -> std::result::Result<String, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = wellFormed)]
    fn well_formed(this: &Ctx, s: &JsValue) -> std::result::Result<bool, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = bigint)]
    fn bigint_text(this: &Ctx, v: &JsValue) -> std::result::Result<String, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = keyAt)]
    fn key_at(this: &Ctx, keys: &JsValue, i: u32) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, structural, js_name = count)]
    fn count(this: &Ctx, keys: &JsValue) -> std::result::Result<f64, JsValue>;
    #[wasm_bindgen(method, getter, structural, js_name = THROWN)]
    fn thrown(this: &Ctx) -> JsValue;
}

/// The reader of live values in the wasm build.
pub(crate) struct Reader {
    ctx: Ctx,
    thrown: JsValue,
}

/// The reader for an export's `ctx` argument.
pub(crate) fn host(ctx: &JsValue) -> Reader {
    let ctx: Ctx = ctx.clone().unchecked_into();
    let thrown = ctx.thrown();
    Reader { ctx, thrown }
}

const BROKEN: &str = "the value could not be read (the binding's readers are missing)";

impl Reader {
    /// A reader's answer; the `THROWN` value is the caller's exception,
    /// described.
    fn answer(
        &self,
        r: std::result::Result<JsValue, JsValue>,
    ) -> std::result::Result<JsValue, String> {
        let v = r.map_err(|_| BROKEN.to_owned())?;
        if v.is_symbol() && v == self.thrown {
            let what = self.ctx.last_thrown().unwrap_or_default();
            return Err(format!("the value cannot be read as plain data ({what})"));
        }
        Ok(v)
    }
}

impl Host for Reader {
    type V = JsValue;

    fn prim(&self, v: &JsValue) -> std::result::Result<Prim, String> {
        Ok(if v.is_undefined() {
            Prim::Undefined
        } else if v.is_null() {
            Prim::Null
        } else if let Some(b) = v.as_bool() {
            Prim::Bool(b)
        } else if let Some(x) = v.as_f64() {
            Prim::Number(x)
        } else if v.is_string() {
            Prim::String(v.unchecked_ref::<js_sys::JsString>().length() as usize)
        } else if v.is_bigint() {
            Prim::BigInt
        } else if v.is_symbol() {
            Prim::Symbol
        } else if v.is_function() {
            Prim::Function
        } else {
            Prim::Object
        })
    }

    fn text(&self, v: &JsValue) -> std::result::Result<Option<String>, String> {
        // A lone surrogate has no UTF-8 form (`as_string` would put U+FFFD
        // in its place): asked first.
        if !self.ctx.well_formed(v).map_err(|_| BROKEN.to_owned())? {
            return Ok(None);
        }
        Ok(v.as_string())
    }

    fn bigint(&self, v: &JsValue) -> std::result::Result<i128, String> {
        let text = self.ctx.bigint_text(v).map_err(|_| BROKEN.to_owned())?;
        Ok(text.parse::<i128>().unwrap_or(if text.starts_with('-') {
            i128::MIN
        } else {
            i128::MAX
        }))
    }

    fn shape(&self, v: &JsValue) -> std::result::Result<Shape, String> {
        let k = self.answer(self.ctx.kind_of(v))?;
        Ok(match (k.as_f64(), k.as_string()) {
            (Some(n), _) => shape_of(n),
            (None, Some(what)) => Shape::Other(what),
            (None, None) => Shape::Other("a value of an unknown kind".into()),
        })
    }

    fn keys(&self, v: &JsValue) -> std::result::Result<(JsValue, usize), String> {
        let keys = self.answer(self.ctx.keys(v))?;
        let n = self.ctx.count(&keys).map_err(|_| BROKEN.to_owned())?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok((keys, n.max(0.0) as usize))
    }

    fn key_at(&self, keys: &JsValue, i: usize) -> std::result::Result<JsValue, String> {
        let i = u32::try_from(i).map_err(|_| "index".to_owned())?;
        self.answer(self.ctx.key_at(keys, i))
    }

    fn own(&self, o: &JsValue, key: &JsValue) -> std::result::Result<JsValue, String> {
        self.answer(self.ctx.own(o, key))
    }

    fn own_at(&self, o: &JsValue, i: usize) -> std::result::Result<JsValue, String> {
        let i = u32::try_from(i).map_err(|_| "index".to_owned())?;
        self.answer(self.ctx.own_at(o, i))
    }
}

/// `kindOf`'s number: an array's length, or −1 for an object read by its
/// own fields.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn shape_of(n: f64) -> Shape {
    if n >= 0.0 && n <= f64::from(u32::MAX) && n.fract() == 0.0 {
        Shape::Array(n as usize)
    } else {
        Shape::Plain
    }
}

/// Numbers the JS layer lends a call (a batch of retry numbers, the
/// decision's numbers): a `Float64Array` the JS layer made, copied in and
/// out of the module's memory.
pub(crate) type Slots = js_sys::Float64Array;

/// The numbers in `slots`.
pub(crate) fn read_f64s(slots: &Slots) -> Vec<f64> {
    slots.to_vec()
}

/// How many numbers `slots` holds.
pub(crate) fn slots_len(slots: &Slots) -> usize {
    slots.length() as usize
}

/// Writes `values` into the first slots.
pub(crate) fn write_f64s(slots: &mut Slots, values: &[f64]) {
    let n = values.len().min(slots_len(slots));
    if let Some(values) = values.get(..n) {
        slots.subarray(0, n as u32).copy_from(values);
    }
}

/// Grows the module's memory geometrically, called when a handle is made.
///
/// The default allocator asks wasm for memory 64 KiB at a time, and V8
/// answers each `memory.grow` by counting new external memory and starting
/// a full collection, which walks the finalizer cell of every live handle:
/// 10^6 policies made in a loop without `free()` slowed 20–50× as they
/// accumulated. Allocating and freeing a block as large as the memory
/// already is, once it has grown, makes the next growth that large, so the
/// memory grows O(log n) times instead of once per 64 KiB; the freed block
/// stays with the allocator (wasm memory never shrinks) and serves the next
/// objects. The reserve is at most the memory's size again; when the
/// memory cannot grow that far, nothing is reserved and nothing fails.
pub(crate) fn reserve_heap() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    const PAGE: usize = 64 * 1024;
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    let pages = core::arch::wasm32::memory_size(0);
    if pages <= SEEN.load(Relaxed) {
        return;
    }
    let mut block: Vec<u8> = Vec::new();
    let _ = block.try_reserve_exact(pages.saturating_mul(PAGE));
    drop(block);
    SEEN.store(core::arch::wasm32::memory_size(0), Relaxed);
}
