//! The lock the module's statics live in (the registries, the buffers).
//!
//! Built for wasm32 without threads (no `atomics` target feature), the
//! module is `no_std`, and a static needs `Sync`: there, [`RwLock`] is a
//! `RefCell` marked `Sync`, which is sound because the module has one
//! thread, and a borrow that is still held is reported as busy as a lock
//! would be (every export answers "busy" by returning its error value
//! instead of blocking). Everywhere else (the native tests, a threaded
//! wasm build) it is std's `RwLock`, whose `try_read` / `try_write` the
//! code calls in both cases.

#[cfg(not(all(target_family = "wasm", not(target_feature = "atomics"), not(test))))]
pub(crate) use std::sync::RwLock;

#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), not(test)))]
pub(crate) use single::RwLock;

#[cfg(all(target_family = "wasm", not(target_feature = "atomics"), not(test)))]
mod single {
    use core::cell::{BorrowError, BorrowMutError, Ref, RefCell, RefMut};

    /// A `RefCell` that may live in a static of a single-threaded module.
    pub(crate) struct RwLock<T>(RefCell<T>);

    // SAFETY: built only for wasm32 without the `atomics` feature, where
    // no second thread exists to share the cell with (the module cannot
    // be instantiated on a shared memory); every access goes through
    // `RefCell`'s checked borrows.
    #[allow(unsafe_code)]
    unsafe impl<T> Sync for RwLock<T> {}

    impl<T> RwLock<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(RefCell::new(value))
        }

        /// A shared borrow, or an error while a write borrow is held.
        pub(crate) fn try_read(&self) -> Result<Ref<'_, T>, BorrowError> {
            self.0.try_borrow()
        }

        /// The write borrow, or an error while any borrow is held.
        pub(crate) fn try_write(&self) -> Result<RefMut<'_, T>, BorrowMutError> {
            self.0.try_borrow_mut()
        }
    }
}
