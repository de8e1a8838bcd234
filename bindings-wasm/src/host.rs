//! A JS value as the core's [`Host`]: the core's one walk reads it (own
//! enumerable keys, plain data, limits before copying), so this build and
//! the Node addon read the same value the same way. The walk runs over an
//! inert copy ([`crate::convert::inert`]): no caller code runs during it.

use js_sys::{Array, JsString, Object, Reflect};
use ojs_retry::value::host::{Host, Kind};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// A value inside an inert copy.
pub struct Js {
    v: JsValue,
    /// `Object.prototype`, which a plain object's prototype is.
    plain: JsValue,
}

impl Js {
    /// The root of a copy.
    pub fn new(v: JsValue) -> Self {
        let plain = Object::get_prototype_of(&Object::new()).into();
        Self { v, plain }
    }

    fn at(&self, v: JsValue) -> Self {
        Self {
            v,
            plain: self.plain.clone(),
        }
    }

    /// What an object that is not plain data is: "a Map", "a Date".
    fn other(&self) -> Kind {
        let name = Object::get_prototype_of(&self.v)
            .constructor()
            .name()
            .as_string()
            .unwrap_or_default();
        Kind::Other(match name.as_str() {
            "Map" => "a Map",
            "Set" => "a Set",
            "Date" => "a Date",
            "RegExp" => "a RegExp",
            "Number" | "String" | "Boolean" => "a boxed primitive",
            "ArrayBuffer" | "SharedArrayBuffer" | "DataView" => "binary data",
            "Error" => "an Error",
            _ if js_sys::ArrayBuffer::is_view(&self.v) => "a typed array",
            _ => "an object that is not plain data",
        })
    }
}

impl Host for Js {
    type Error = JsValue;

    fn kind(&self) -> Result<Kind, JsValue> {
        let v = &self.v;
        Ok(if v.is_undefined() {
            Kind::Undefined
        } else if v.is_null() {
            Kind::Null
        } else if let Some(b) = v.as_bool() {
            Kind::Bool(b)
        } else if let Some(x) = v.as_f64() {
            Kind::Number(x)
        } else if let Some(s) = v.dyn_ref::<JsString>() {
            Kind::String(s.length() as usize)
        } else if v.is_bigint() {
            Kind::BigInt(i128::try_from(v.clone()).unwrap_or_else(|_| saturated(v)))
        } else if Array::is_array(v) {
            Kind::Array(v.unchecked_ref::<Array>().length() as usize)
        } else if v.is_object() {
            let proto = Object::get_prototype_of(v);
            if proto.is_null() || JsValue::from(proto) == self.plain {
                Kind::Object
            } else {
                self.other()
            }
        } else if v.is_function() {
            Kind::Other("a function")
        } else {
            Kind::Other("a symbol")
        })
    }

    fn text(&self) -> Result<Option<String>, JsValue> {
        let s: &JsString = self.v.unchecked_ref();
        // A lone surrogate has no UTF-8 form (`as_string` would put U+FFFD
        // in its place).
        Ok(s.is_well_formed().then(|| s.into()))
    }

    fn element(&self, index: usize) -> Result<Self, JsValue> {
        let index = u32::try_from(index).map_err(|_| JsValue::from_str("index"))?;
        Ok(self.at(Reflect::get_u32(&self.v, index)?))
    }

    fn keys(&self) -> Result<Self, JsValue> {
        Ok(Self::new(
            Object::keys(self.v.unchecked_ref::<Object>()).into(),
        ))
    }

    fn member(&self, key: &Self) -> Result<Self, JsValue> {
        Ok(self.at(Reflect::get(&self.v, &key.v)?))
    }
}

/// A BigInt beyond 128 bits, saturated by its sign (every integer field
/// refuses what is beyond 64 bits anyway).
fn saturated(v: &JsValue) -> i128 {
    if v.lt(&JsValue::from(0)) {
        i128::MIN
    } else {
        i128::MAX
    }
}
