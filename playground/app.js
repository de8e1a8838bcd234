// The playground: a policy editor with the engine's faults inline, a preset
// picker whose form is built from the preset's own options and defaults,
// the schedule, the decision explorer and the herd simulation. Everything
// is computed by the ojs-retry-wasm engine in this page.

import * as ojs from "ojs-retry-wasm";
import { renderSchedule } from "./schedule.js";
import { renderHerd } from "./herd.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_DOC = { max_attempts: 10, initial_interval: "PT1S", backoff_coefficient: 2.0, max_interval: "PT5M", jitter: true, non_retryable_errors: ["validation.*"], on_exhaustion: "dead_letter" };
const pretty = (v) => JSON.stringify(v, null, 2);
const escape = (s) => s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);

const state = { policy: null, scheduleRetriesTouched: false, timings: {} };
window.__playground = state;

// --- the policy editor ---------------------------------------------------------

/** The document key a fault is at (path `preset.max_retries` → `max_retries`, `non_retryable_errors[0]` → `non_retryable_errors`). */
function keyOf(fault) {
  const at = fault.path ?? fault.field;
  return at ? at.split(".").pop().replace(/\[.*$/, "") : null;
}

/** The editor's text with each faulty field's key marked. */
function markFields(text, faults) {
  const keys = new Set(faults.map(keyOf).filter(Boolean));
  let html = escape(text);
  for (const k of keys) {
    const quoted = escape(JSON.stringify(k));
    html = html.split(quoted).join(`<mark data-field="${escape(k)}">${quoted}</mark>`);
  }
  $("editor-marks").innerHTML = html + "\n";
}

function showFaults(error) {
  const list = $("faults");
  list.replaceChildren();
  const faults = error ? error.faults ?? [] : [];
  for (const f of faults) {
    const li = document.createElement("li");
    li.dataset.code = error.code;
    li.dataset.field = f.field ?? "";
    li.dataset.path = f.path ?? "";
    li.innerHTML = `<code>${escape(f.path ?? "(document)")}</code> ${escape(f.message)} <small>${escape(error.code)}</small>`;
    list.appendChild(li);
  }
  if (error && !faults.length) {
    const li = document.createElement("li");
    li.dataset.code = error.code ?? "";
    li.textContent = String(error.message ?? error);
    list.appendChild(li);
  }
  if (!error) {
    const li = document.createElement("li");
    li.className = "ok";
    li.textContent = "valid policy";
    list.appendChild(li);
  }
  markFields($("editor").value, faults);
}

function compile() {
  try {
    state.policy = new ojs.RetryPolicy($("editor").value);
    showFaults(null);
  } catch (e) {
    state.policy = null;
    showFaults(e);
  }
  return state.policy;
}

// --- presets ---------------------------------------------------------------------

/** One input per option of the preset's canonical document, holding its default. */
function presetForm(system, options) {
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
  form.oninput = () => applyPresetForm(system);
}

function readPresetForm() {
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

function applyPresetForm(system) {
  const form = $("preset-form");
  form.querySelectorAll(".fault").forEach((n) => n.remove());
  form.querySelectorAll("label").forEach((l) => l.classList.remove("bad"));
  try {
    const p = ojs.RetryPolicy.preset(system, readPresetForm());
    $("editor").value = pretty(p.toJSON());
    update();
  } catch (e) {
    for (const f of e.faults ?? []) {
      const l = form.querySelector(`label[data-option="${keyOf(f)}"]`);
      if (!l) continue;
      l.classList.add("bad");
      const s = document.createElement("span");
      s.className = "fault";
      s.textContent = f.message;
      l.appendChild(s);
    }
    showFaults(e);
  }
}

function pickPreset() {
  const system = $("preset-system").value;
  if (!system) {
    $("preset-form").hidden = true;
    $("editor").value = pretty(DEFAULT_DOC);
  } else {
    const doc = ojs.RetryPolicy.preset(system, {}).toJSON();
    presetForm(system, doc.preset);
    $("editor").value = pretty(doc);
  }
  state.scheduleRetriesTouched = false;
  update();
}

function presetViews(policy) {
  const isPreset = policy && policy.presetSystem !== null;
  $("preset-views").hidden = !isPreset;
  if (!isPreset) return;
  $("preset-doc").textContent = pretty(policy.toJSON());
  $("preset-plain").textContent = pretty(policy.nearestPlain().toJSON());
}

// --- schedule and decisions ------------------------------------------------------------

function schedule(policy) {
  if (!state.scheduleRetriesTouched) $("s-retries").value = Math.min(100, Math.max(1, policy.maxRetries));
  const retries = Math.max(1, Math.min(1000, Number($("s-retries").value) || 1));
  renderSchedule(policy, { retries, key: $("s-key").value, log: $("s-log").checked }, { svg: $("s-chart"), tbody: $("s-table").tBodies[0], caption: $("s-caption") });
}

function decide(policy) {
  const ids = ["d-action", "d-reason", "d-pattern", "d-retry", "d-delay", "d-next"];
  ids.forEach((id) => { $(id).textContent = ""; $(id).removeAttribute("data-value"); });
  $("d-error").textContent = "";
  try {
    const failure = { attempt: Number($("d-attempt").value) };
    if ($("d-type").value) failure.type = $("d-type").value;
    if ($("d-code").value) failure.code = $("d-code").value;
    if ($("d-timeout").checked) failure.timedOut = true;
    const nowText = $("d-now").value.trim();
    const now = /^\d+$/.test(nowText) ? Number(nowText) : ojs.parseTimestamp(nowText);
    const kind = $("d-jitter").value;
    const v = $("d-jitter-value").value;
    const jitter = kind === "u" ? { u: Number(v) } : { [kind]: v };
    const d = policy.decide(failure, { now, ...jitter });
    const show = (id, value, text = value) => {
      $(id).textContent = value === null ? "—" : String(text);
      $(id).dataset.value = value === null ? "null" : String(value);
    };
    show("d-action", d.action);
    show("d-reason", d.reason);
    show("d-pattern", d.matchedPattern);
    show("d-retry", d.retryNumber);
    show("d-delay", d.delayMs, d.delayMs === null ? "" : `${d.delayMs} ms (${ojs.formatDuration(d.delayMs)})`);
    show("d-next", d.nextRetryAt, d.nextRetryAt === null ? "" : `${ojs.formatTimestamp(d.nextRetryAt)} (${d.nextRetryAt})`);
  } catch (e) {
    $("d-error").textContent = `${e.code ?? "error"}${e.field ? ` (${e.field})` : ""}: ${e.message}`;
    $("d-error").dataset.code = e.code ?? "";
  }
}

// --- herd --------------------------------------------------------------------------

function herdEntries(policy) {
  const entries = [{ name: "as written", policy }];
  if (policy.presetSystem === null) {
    entries.push({ name: "without jitter", policy: new ojs.RetryPolicy({ ...policy.toJSON(), jitter: false }) });
  }
  for (const box of $("h-presets").querySelectorAll("input:checked")) {
    entries.push({ name: `${box.value} (defaults)`, policy: ojs.RetryPolicy.preset(box.value, {}) });
  }
  return entries;
}

function herd() {
  const policy = state.policy;
  $("h-error").textContent = "";
  if (!policy) return;
  try {
    const jobs = Number($("h-jobs").value);
    const retries = Number($("h-retries").value);
    const t = renderHerd($("h-charts"), herdEntries(policy), { jobs, retries, log: $("h-log").checked });
    state.timings.herd = { jobs, retries, engineMs: t.engineMs, drawMs: t.drawMs, perPolicyMs: t.results.map((r) => [r.name, r.ms]) };
    $("h-summary").textContent = `${t.results.length} herds of ${jobs.toLocaleString("en")} jobs × up to ${retries} retries: engine ${t.engineMs.toFixed(0)} ms, drawing ${t.drawMs.toFixed(0)} ms.`;
    $("h-summary").dataset.engineMs = t.engineMs.toFixed(1);
    $("h-summary").dataset.drawMs = t.drawMs.toFixed(1);
  } catch (e) {
    $("h-error").textContent = `${e.code ?? "error"}${e.field ? ` (${e.field})` : ""}: ${e.message}`;
  }
}

// --- wiring ------------------------------------------------------------------------

function update() {
  const policy = compile();
  presetViews(policy);
  if (!policy) return;
  schedule(policy);
  decide(policy);
}

let timer = 0;
function later(fn) {
  return () => { clearTimeout(timer); timer = setTimeout(fn, 120); };
}

function start() {
  for (const s of ojs.presetSystems()) {
    $("preset-system").add(new Option(s, s));
    const l = document.createElement("label");
    l.innerHTML = `<input type="checkbox" value="${s}"> ${s}`;
    $("h-presets").appendChild(l);
  }
  $("editor").value = pretty(DEFAULT_DOC);
  $("editor").addEventListener("input", later(update));
  $("editor").addEventListener("scroll", () => { $("editor-marks").scrollTop = $("editor").scrollTop; });
  $("preset-system").addEventListener("change", pickPreset);
  $("s-retries").addEventListener("input", () => { state.scheduleRetriesTouched = true; update(); });
  for (const id of ["s-key", "s-log"]) $(id).addEventListener("input", update);
  for (const id of ["d-attempt", "d-type", "d-code", "d-timeout", "d-now", "d-jitter", "d-jitter-value"]) {
    $(id).addEventListener("input", () => state.policy && decide(state.policy));
  }
  $("h-run").addEventListener("click", herd);
  $("h-log").addEventListener("input", herd);
  update();
  herd();
  $("status").textContent = "engine ready";
  $("status").dataset.state = "ready";
  state.ready = true;
}

try {
  start();
} catch (e) {
  $("status").textContent = `failed: ${e.message}`;
  $("status").dataset.state = "failed";
  throw e;
}
