//! The herd simulation and the nearest plain policy, as `RetryPolicy`
//! methods.

use ojs_retry::{Case, Cased};
use wasm_bindgen::prelude::*;

use crate::convert::{self, JsResult};
use crate::policy::RetryPolicy;

#[wasm_bindgen]
impl RetryPolicy {
    /// `jobs` jobs (jitter keys "1" … "jobs") failing at the same instant,
    /// for at most `retries` rounds: per round, the histogram of retry
    /// arrivals in buckets of `bucketMs`, and the peak arrivals per second.
    #[wasm_bindgen(unchecked_return_type = "Herd")]
    pub fn herd(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] jobs: &JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] retries: &JsValue,
        #[wasm_bindgen(js_name = bucketMs, unchecked_param_type = "number")] bucket_ms: &JsValue,
    ) -> JsResult<JsValue> {
        let h = self.0.herd(
            convert::uint(jobs, "jobs")?,
            convert::uint(retries, "retries")?,
            convert::uint(bucket_ms, "bucket_ms")?,
        )?;
        convert::out(&Cased(&h, Case::Camel), "herd")
    }

    /// The plain OJS policy nearest to this one (a preset's translation;
    /// any other policy unchanged).
    #[wasm_bindgen(js_name = nearestPlain)]
    pub fn nearest_plain(&self) -> RetryPolicy {
        Self(self.0.nearest_plain())
    }
}
