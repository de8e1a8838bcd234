// The preset picker's form (one input per option of the preset's canonical
// document, holding its default) and the two views beside a preset policy:
// its document and its nearest plain OJS policy, in words.

import { human, capText, UNBOUNDED } from "./svg.js";

const $ = (id) => document.getElementById(id);
const pretty = (v) => JSON.stringify(v, null, 2);

/** Builds the form for `system` from its default `options`; `onInput` runs on every change. */
export function presetForm(options, onInput) {
  const form = $("preset-form");
  form.replaceChildren();
  form.hidden = false;
  for (const [name, value] of Object.entries(options)) {
    if (name === "system") continue;
    const l = document.createElement("label");
    l.dataset.option = name;
    const input = document.createElement("input");
    input.name = name;
    if (typeof value === "boolean") {
      input.type = "checkbox";
      input.checked = value;
    } else if (typeof value === "number") {
      input.type = "number";
      input.step = "any";
      input.value = String(value);
    } else {
      input.value = typeof value === "string" ? value : JSON.stringify(value);
      input.dataset.json = typeof value === "string" ? "" : "1";
    }
    input.dataset.kind = typeof value;
    l.append(`${name} `, input);
    form.appendChild(l);
  }
  form.oninput = onInput;
}

/** The form's options, as the preset takes them. */
export function readPresetForm() {
  const options = {};
  for (const input of $("preset-form").querySelectorAll("input")) {
    const { kind, json } = input.dataset;
    if (kind === "boolean") options[input.name] = input.checked;
    else if (kind === "number") options[input.name] = input.value === "" ? null : Number(input.value);
    else if (json) {
      try { options[input.name] = JSON.parse(input.value); } catch { options[input.name] = input.value; }
    } else options[input.name] = input.value;
  }
  return options;
}

/** The nearest plain policy's fields in words ("no cap", "unlimited"), each with its value in data-value. */
function plainFields(plain) {
  const doc = plain.toJSON();
  const attempts = plain.maxAttempts >= UNBOUNDED
    ? "unlimited"
    : `${plain.maxAttempts} (${plain.maxRetries === 1 ? "1 retry" : `${plain.maxRetries} retries`})`;
  return [
    ["max_attempts", plain.maxAttempts, attempts],
    ["initial_interval", doc.initial_interval, human(plain.initialIntervalMs)],
    ["backoff_coefficient", doc.backoff_coefficient, String(doc.backoff_coefficient)],
    ["max_interval", plain.maxIntervalMs >= UNBOUNDED ? "none" : doc.max_interval, capText(plain.maxIntervalMs)],
    ["jitter", doc.jitter, doc.jitter ? "on, [0.5, 1.5) × the delay" : "off"],
    ["backoff_strategy", doc.backoff_strategy ?? "exponential", doc.backoff_strategy ?? "exponential"],
    ["non_retryable_errors", JSON.stringify(doc.non_retryable_errors), doc.non_retryable_errors.length ? doc.non_retryable_errors.join(", ") : "none"],
    ["on_exhaustion", doc.on_exhaustion, doc.on_exhaustion.replace("_", " ")],
  ];
}

/** Shows (or hides, for a plain policy) the preset's document and its nearest plain policy. */
export function presetViews(policy) {
  const isPreset = policy && policy.presetSystem !== null;
  $("preset-views").hidden = !isPreset;
  if (!isPreset) return;
  $("preset-doc").textContent = pretty(policy.toJSON());
  const dl = $("preset-plain");
  dl.replaceChildren();
  for (const [name, value, words] of plainFields(policy.nearestPlain())) {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.dataset.field = name;
    dd.dataset.value = String(value);
    dd.textContent = words;
    dl.append(dt, dd);
  }
}
