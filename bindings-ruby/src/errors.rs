//! `OjsRetry::PolicyError`, the one exception the engine's errors become,
//! and the one function that makes it from a core [`CoreError`].

use std::sync::OnceLock;

use magnus::value::Opaque;
use magnus::{Error, ExceptionClass, Module, Object, RModule, RObject, Ruby, exception::Exception};
use magnus::{class::Class as _, prelude::*};
use ojs_retry::{Error as CoreError, ErrorCode};

use crate::convert::{Keys, to_ruby};

/// The class, defined once by [`define`] (a constant: never collected).
static POLICY_ERROR: OnceLock<Opaque<ExceptionClass>> = OnceLock::new();

/// Every code the engine can raise, in a stable order (`ERROR_CODES`).
pub(crate) const ERROR_CODES: [ErrorCode; 4] = [
    ErrorCode::RetryPolicyInvalid,
    ErrorCode::DurationInvalid,
    ErrorCode::InvalidArgument,
    ErrorCode::StateInvalid,
];

/// Defines `OjsRetry::PolicyError < ArgumentError`: a bad policy is a bad
/// argument, and `rescue ArgumentError` is how Ruby code already catches
/// one. Its readers (`code`, `field`, `path`, `faults`) are in
/// `lib/ojs_retry.rb`.
pub(crate) fn define(ruby: &Ruby, module: RModule) -> Result<(), Error> {
    let class = module.define_error("PolicyError", ruby.exception_arg_error())?;
    // A second `define` (the extension loaded twice) finds the same class.
    let _ = POLICY_ERROR.set(Opaque::from(class));
    Ok(())
}

/// A core error as a `PolicyError`: the only place one is made.
pub(crate) fn to_ruby_error(ruby: &Ruby, e: &CoreError) -> Error {
    match exception(ruby, e) {
        Ok(exc) => Error::from(exc),
        // Making the exception failed (out of memory): raise that instead.
        Err(other) => other,
    }
}

fn exception(ruby: &Ruby, e: &CoreError) -> Result<Exception, Error> {
    let class = POLICY_ERROR
        .get()
        .map_or_else(|| ruby.exception_arg_error(), |c| ruby.get_inner(*c));
    let exc = class.new_instance((e.to_string(),))?;
    // An exception is a plain object: its readers are `attr_reader`s.
    let obj = RObject::from_value(exc.as_value())
        .ok_or_else(|| Error::new(ruby.exception_type_error(), "PolicyError is not an object"))?;
    obj.ivar_set("@code", e.code().as_str())?;
    obj.ivar_set("@field", e.field())?;
    obj.ivar_set("@path", e.path())?;
    let faults = serde_json::to_value(e.faults())
        .map_err(|err| Error::new(ruby.exception_runtime_error(), err.to_string()))?;
    obj.ivar_set("@faults", to_ruby(ruby, &faults, Keys::Symbols)?)?;
    Ok(exc)
}

/// A `validation.invalid_argument` error at `field`, for what only the
/// binding can see: a Ruby value of the wrong class for an argument.
pub(crate) fn bad_argument(field: &str, message: String) -> CoreError {
    CoreError::invalid_argument(field, message)
}

/// Maps a core result into a Ruby result.
pub(crate) trait CoreResult<T> {
    /// The core error as a `PolicyError`.
    fn rb(self, ruby: &Ruby) -> Result<T, Error>;
}

impl<T> CoreResult<T> for Result<T, CoreError> {
    fn rb(self, ruby: &Ruby) -> Result<T, Error> {
        self.map_err(|e| to_ruby_error(ruby, &e))
    }
}
