//! A JS value as the core's [`Host`]: the core's one walk reads it (own
//! enumerable keys, plain data, limits before copying), so the addon and
//! the wasm build read the same value the same way.
//!
//! The value is first copied by the host's `structuredClone`, as the wasm
//! build does: getters and proxies run there, once, before the walk, and
//! what cannot be cloned (a function, a symbol, a proxy, a promise) is one
//! fault of the whole document in both builds.

use napi::ValueType;
use napi::bindgen_prelude::{
    BigInt, Env, FromNapiValue, Function, JsObjectValue, JsValue, KeyCollectionMode, KeyConversion,
    KeyFilter, Object, Unknown,
};
use ojs_retry::value::host::{self, Host, Kind};
use ojs_retry::{Error as CoreError, ErrorCode, Fault, Value};

use crate::error::OrThrow;

/// A value inside the copy being read.
struct Js<'e> {
    env: &'e Env,
    v: Unknown<'e>,
    /// `Object.prototype`, which a plain object's prototype is.
    plain: &'e Unknown<'e>,
}

impl<'e> Js<'e> {
    fn at(&self, v: Unknown<'e>) -> Self {
        Self {
            env: self.env,
            v,
            plain: self.plain,
        }
    }

    fn object(&self) -> napi::Result<Object<'e>> {
        self.v.coerce_to_object()
    }

    /// What an object that is not plain data is: "a Map", "a Date".
    fn other(&self, object: &Object<'e>) -> napi::Result<Kind> {
        let name = object
            .get_prototype()?
            .coerce_to_object()
            .and_then(|p| p.get_named_property::<Unknown>("constructor"))
            .and_then(|c| c.coerce_to_object())
            .and_then(|c| c.get_named_property::<String>("name"))
            .unwrap_or_default();
        Ok(Kind::Other(match name.as_str() {
            "Map" => "a Map",
            "Set" => "a Set",
            "Date" => "a Date",
            "RegExp" => "a RegExp",
            "Number" | "String" | "Boolean" => "a boxed primitive",
            "ArrayBuffer" | "SharedArrayBuffer" | "DataView" => "binary data",
            "Error" => "an Error",
            _ if object.is_typedarray()? => "a typed array",
            _ => "an object that is not plain data",
        }))
    }
}

impl<'e> Host for Js<'e> {
    type Error = napi::Error;

    fn kind(&self) -> napi::Result<Kind> {
        Ok(match self.v.get_type()? {
            ValueType::Undefined => Kind::Undefined,
            ValueType::Null => Kind::Null,
            ValueType::Boolean => Kind::Bool(self.v.coerce_to_bool()?),
            ValueType::Number => Kind::Number(self.v.coerce_to_number()?.get_double()?),
            ValueType::String => Kind::String(self.v.coerce_to_string()?.utf16_len()?),
            ValueType::BigInt => Kind::BigInt(bigint(&BigInt::from_unknown(self.v)?)),
            ValueType::Object => {
                let object = self.object()?;
                if object.is_array()? {
                    Kind::Array(object.get_array_length()? as usize)
                } else if self
                    .env
                    .strict_equals(object.get_prototype()?, *self.plain)?
                {
                    Kind::Object
                } else {
                    self.other(&object)?
                }
            }
            ValueType::Function => Kind::Other("a function"),
            ValueType::Symbol => Kind::Other("a symbol"),
            _ => Kind::Other("a value of an unknown type"),
        })
    }

    fn text(&self) -> napi::Result<Option<String>> {
        let units = self.v.coerce_to_string()?.into_utf16()?;
        // napi-rs's buffer ends with the terminating NUL it asked for.
        let text = units
            .as_slice()
            .split_last()
            .map_or(&[][..], |(_, text)| text);
        Ok(String::from_utf16(text).ok())
    }

    fn element(&self, index: usize) -> napi::Result<Self> {
        let index = u32::try_from(index).map_err(|_| napi::Error::from_reason("index"))?;
        Ok(self.at(self.object()?.get_element::<Unknown>(index)?))
    }

    fn keys(&self) -> napi::Result<Self> {
        let names = self.object()?.get_all_property_names(
            KeyCollectionMode::OwnOnly,
            KeyFilter::Enumerable,
            KeyConversion::NumbersToStrings,
        )?;
        Ok(self.at(names.to_unknown()))
    }

    fn member(&self, key: &Self) -> napi::Result<Self> {
        Ok(self.at(self.object()?.get_property::<Unknown, Unknown>(key.v)?))
    }
}

/// A BigInt's value, saturated beyond 128 bits (every integer field
/// refuses what is beyond 64 bits anyway).
fn bigint(b: &BigInt) -> i128 {
    match b.get_i128() {
        (v, true) => v,
        _ if b.sign_bit => i128::MIN,
        _ => i128::MAX,
    }
}

/// A JS value as a document: its value, or the fault (located at its
/// path) that stopped reading it.
pub(crate) fn read(
    env: &Env,
    v: Unknown<'_>,
    field: Option<&str>,
) -> napi::Result<Result<Value, Fault>> {
    let global = env.get_global()?;
    let copy = if v.get_type()? == ValueType::Object {
        let clone = global.get_named_property::<Function<Unknown, Unknown>>("structuredClone")?;
        match clone.call(v) {
            Ok(copy) => copy,
            Err(thrown) => {
                return Ok(Err(Fault {
                    field: field.map(String::from),
                    path: field.map(String::from),
                    message: format!("the value cannot be read as plain data ({})", thrown.reason),
                }));
            }
        }
    } else {
        v
    };
    let plain = global
        .get_named_property::<Unknown>("Object")?
        .coerce_to_object()?
        .get_named_property::<Unknown>("prototype")?;
    host::read_as(
        &Js {
            env,
            v: copy,
            plain: &plain,
        },
        field,
    )
}

/// A JS value as a document for a reader whose faults have `code`.
pub(crate) fn document(env: &Env, v: Unknown<'_>, code: ErrorCode) -> napi::Result<Value> {
    document_as(env, v, code, None)
}

/// [`document`] for an argument named `field`, its faults located there.
pub(crate) fn document_as(
    env: &Env,
    v: Unknown<'_>,
    code: ErrorCode,
    field: Option<&str>,
) -> napi::Result<Value> {
    read(env, v, field)?
        .map_err(|f| CoreError::from_fault(code, f))
        .or_throw(env)
}
