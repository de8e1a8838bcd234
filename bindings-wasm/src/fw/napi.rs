//! The native build: napi-rs.

use std::cell::OnceCell;

use napi::bindgen_prelude::{
    BigInt, Env, FnArgs, FromNapiValue, Function, JsObjectValue, JsValue, Object, Unknown,
};
use napi::{JsString, ValueType};

use super::Core;
use crate::read::{Host, Prim, Shape};

/// A JS value an export takes as it is (read by [`crate::read`]).
pub(crate) type Val<'a> = Unknown<'a>;

/// What an export returns; its error throws a JS `Error` whose message is
/// the JSON text of [`Thrown`].
pub(crate) type Result<T> = napi::Result<T>;

/// A core result as an export's.
pub(crate) fn ret<T>(r: Core<T>) -> Result<T> {
    r.map_err(|t| napi::Error::from_reason(t.json()))
}

/// The handle of a wrapped engine object: an `External`, which napi-rs
/// type-checks when it is passed back.
pub(crate) type Handle<T> = napi::bindgen_prelude::External<T>;

/// A value's handle.
pub(crate) fn handle<T: 'static>(x: T) -> Handle<T> {
    napi::bindgen_prelude::External::new(x)
}

/// The JS layer's readers (`js/host.js`), taken from the `ctx` object it
/// passes: the ones that may run the caller's code, every exception caught
/// there (an exception is the `THROWN` value, described by `lastThrown`).
struct Fns<'e> {
    kind_of: Function<'e, Unknown<'e>, Unknown<'e>>,
    keys: Function<'e, Unknown<'e>, Unknown<'e>>,
    own: Function<'e, FnArgs<(Unknown<'e>, Unknown<'e>)>, Unknown<'e>>,
    own_at: Function<'e, FnArgs<(Unknown<'e>, u32)>, Unknown<'e>>,
    last_thrown: Function<'e, (), String>,
    thrown: Unknown<'e>,
}

/// The reader of live values in the native build.
pub(crate) struct Reader<'e> {
    ctx: Unknown<'e>,
    fns: OnceCell<std::result::Result<Fns<'e>, String>>,
}

/// The reader for an export's `ctx` argument.
pub(crate) fn host<'e>(ctx: &Unknown<'e>) -> Reader<'e> {
    Reader {
        ctx: *ctx,
        fns: OnceCell::new(),
    }
}

fn status(e: &napi::Error) -> String {
    format!("the value could not be read ({})", e.reason)
}

impl<'e> Reader<'e> {
    fn fns(&self) -> std::result::Result<&Fns<'e>, String> {
        self.fns
            .get_or_init(|| {
                let ctx: Object<'e> = self.ctx.coerce_to_object().map_err(|e| status(&e))?;
                let get = |name: &str| {
                    ctx.get_named_property::<Unknown<'e>>(name)
                        .map_err(|e| status(&e))
                };
                let f = |name: &str| -> std::result::Result<Unknown<'e>, String> {
                    let v = get(name)?;
                    match v.get_type() {
                        Ok(ValueType::Function) => Ok(v),
                        _ => Err(format!("the binding's reader {name} is missing")),
                    }
                };
                Ok(Fns {
                    kind_of: Function::from_unknown(f("kindOf")?).map_err(|e| status(&e))?,
                    keys: Function::from_unknown(f("keys")?).map_err(|e| status(&e))?,
                    own: Function::from_unknown(f("own")?).map_err(|e| status(&e))?,
                    own_at: Function::from_unknown(f("ownAt")?).map_err(|e| status(&e))?,
                    last_thrown: Function::from_unknown(f("lastThrown")?)
                        .map_err(|e| status(&e))?,
                    thrown: get("THROWN")?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A reader's answer; the `THROWN` value is the caller's exception,
    /// described.
    fn answer(&self, r: napi::Result<Unknown<'e>>) -> std::result::Result<Unknown<'e>, String> {
        let fns = self.fns()?;
        let v = r.map_err(|e| status(&e))?;
        if v.get_type().map_err(|e| status(&e))? == ValueType::Symbol {
            let env = Env::from_raw(v.value().env);
            if env.strict_equals(v, fns.thrown).map_err(|e| status(&e))? {
                let what = fns.last_thrown.call(()).unwrap_or_default();
                return Err(format!("the value cannot be read as plain data ({what})"));
            }
        }
        Ok(v)
    }
}

impl<'e> Host for Reader<'e> {
    type V = Unknown<'e>;

    fn prim(&self, v: &Unknown<'e>) -> std::result::Result<Prim, String> {
        let t = v.get_type().map_err(|e| status(&e))?;
        Ok(match t {
            ValueType::Undefined => Prim::Undefined,
            ValueType::Null => Prim::Null,
            ValueType::Boolean => Prim::Bool(v.coerce_to_bool().map_err(|e| status(&e))?),
            ValueType::Number => Prim::Number(
                v.coerce_to_number()
                    .and_then(|n| n.get_double())
                    .map_err(|e| status(&e))?,
            ),
            ValueType::String => Prim::String(string(v)?.utf16_len().map_err(|e| status(&e))?),
            ValueType::BigInt => Prim::BigInt,
            ValueType::Symbol => Prim::Symbol,
            ValueType::Function => Prim::Function,
            _ => Prim::Object,
        })
    }

    fn text(&self, v: &Unknown<'e>) -> std::result::Result<Option<String>, String> {
        let units = string(v)?.into_utf16().map_err(|e| status(&e))?;
        // napi-rs's buffer ends with the terminating NUL it asked for.
        let text = units
            .as_slice()
            .split_last()
            .map_or(&[][..], |(_, text)| text);
        Ok(String::from_utf16(text).ok())
    }

    fn bigint(&self, v: &Unknown<'e>) -> std::result::Result<i128, String> {
        let b = BigInt::from_unknown(*v).map_err(|e| status(&e))?;
        Ok(match b.get_i128() {
            (x, true) => x,
            _ if b.sign_bit => i128::MIN,
            _ => i128::MAX,
        })
    }

    fn shape(&self, v: &Unknown<'e>) -> std::result::Result<Shape, String> {
        let fns = self.fns()?;
        let k = self.answer(fns.kind_of.call(*v))?;
        match k.get_type().map_err(|e| status(&e))? {
            ValueType::Number => {
                let n = k
                    .coerce_to_number()
                    .and_then(|n| n.get_double())
                    .map_err(|e| status(&e))?;
                Ok(shape_of(n))
            }
            _ => Ok(Shape::Other(
                string(&k)?
                    .into_utf8()
                    .and_then(|s| s.into_owned())
                    .map_err(|e| status(&e))?,
            )),
        }
    }

    fn keys(&self, v: &Unknown<'e>) -> std::result::Result<(Unknown<'e>, usize), String> {
        let fns = self.fns()?;
        let keys = self.answer(fns.keys.call(*v))?;
        let len = keys
            .coerce_to_object()
            .and_then(|o| o.get_array_length())
            .map_err(|e| status(&e))?;
        Ok((keys, len as usize))
    }

    fn key_at(&self, keys: &Unknown<'e>, i: usize) -> std::result::Result<Unknown<'e>, String> {
        let i = u32::try_from(i).map_err(|_| "index".to_owned())?;
        keys.coerce_to_object()
            .and_then(|o| o.get_element::<Unknown<'e>>(i))
            .map_err(|e| status(&e))
    }

    fn own(&self, o: &Unknown<'e>, key: &Unknown<'e>) -> std::result::Result<Unknown<'e>, String> {
        let fns = self.fns()?;
        self.answer(fns.own.call(FnArgs::from((*o, *key))))
    }

    fn own_at(&self, o: &Unknown<'e>, i: usize) -> std::result::Result<Unknown<'e>, String> {
        let fns = self.fns()?;
        let i = u32::try_from(i).map_err(|_| "index".to_owned())?;
        self.answer(fns.own_at.call(FnArgs::from((*o, i))))
    }
}

/// `kindOf`'s number: an array's length, or −1 for an object read by its
/// own fields.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub(crate) fn shape_of(n: f64) -> Shape {
    if n >= 0.0 && n <= f64::from(u32::MAX) && n.fract() == 0.0 {
        Shape::Array(n as usize)
    } else {
        Shape::Plain
    }
}

fn string<'b>(v: &'b Unknown<'_>) -> std::result::Result<JsString<'b>, String> {
    v.coerce_to_string().map_err(|e| status(&e))
}

/// Numbers the JS layer lends a call (a batch of retry numbers, the
/// decision's numbers): natively a `Buffer` over a `Float64Array`'s memory
/// (napi-rs gives a safe mutable view of a `Buffer`'s bytes), borrowed only
/// while the call runs, when no JS runs.
pub(crate) type Slots<'a> = napi::bindgen_prelude::BufferSlice<'a>;

/// The numbers in `slots`.
pub(crate) fn read_f64s(slots: &Slots<'_>) -> Vec<f64> {
    slots
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_ne_bytes(b)
        })
        .collect()
}

/// How many numbers `slots` holds.
pub(crate) fn slots_len(slots: &Slots<'_>) -> usize {
    slots.len() / 8
}

/// Writes `values` into the first slots.
pub(crate) fn write_f64s(slots: &mut Slots<'_>, values: &[f64]) {
    for (c, v) in slots.chunks_exact_mut(8).zip(values) {
        c.copy_from_slice(&v.to_ne_bytes());
    }
}
