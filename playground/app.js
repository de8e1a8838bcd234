// The playground: a policy editor with the engine's faults marked where
// they were typed, a preset picker whose form is built from the preset's
// own options and defaults, the schedule, the decision explorer and the
// herd simulation. Everything is computed by the ojs-retry-wasm engine in
// this page.
//
// Every view follows the editor: each valid change of text, preset or
// preset option re-runs the schedule and the decision at once and the herd
// shortly after (debounced: it is the costly one). While the editor or the
// form holds a fault, the views keep the last valid policy and say so.

import * as ojs from "ojs-retry-wasm";
import { renderSchedule, drawSchedule } from "./schedule.js";
import { renderHerd, drawHerd } from "./herd.js";
import { showFaults } from "./editor.js";
import { presetForm, readPresetForm, presetViews } from "./preset.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_DOC = { max_attempts: 10, initial_interval: "PT1S", backoff_coefficient: 2.0, max_interval: "PT5M", jitter: true, non_retryable_errors: ["validation.*"], on_exhaustion: "dead_letter" };
const pretty = (v) => JSON.stringify(v, null, 2);
const HERD_DELAY_MS = 250;
const VIEWS = ["schedule", "decide", "herd"];

/** `policy`: the last valid policy; `version`: how many valid policies the editor has held. */
const state = { policy: null, version: 0, scheduleRetriesTouched: false, timings: {}, rows: [], herd: null };
window.__playground = state;

// --- staleness --------------------------------------------------------------------

/** Marks every view as showing an older policy (with `reason`), or clears the marks. */
function setStale(reason) {
  if (reason) $("preset-views").dataset.stale = reason;
  else delete $("preset-views").dataset.stale;
  for (const id of VIEWS) {
    const section = $(id);
    let note = section.querySelector(":scope > .stale-note");
    if (!reason) {
      delete section.dataset.stale;
      note?.remove();
      continue;
    }
    section.dataset.stale = reason;
    if (!note) {
      note = document.createElement("p");
      note.className = "stale-note";
      section.insertBefore(note, section.children[1] ?? null);
    }
    note.textContent = state.policy ? `Out of date: ${reason}. This shows the last valid policy.` : `Nothing to show: ${reason}.`;
  }
}

const faultCount = (e) => {
  const n = e?.faults?.length || 1;
  return n === 1 ? "1 fault" : `${n} faults`;
};

// --- the editor and the presets ------------------------------------------------------

/** Compiles the editor's text; on success every view follows it, on a fault they are marked stale. */
function update() {
  let policy;
  try {
    policy = new ojs.RetryPolicy($("editor").value);
  } catch (e) {
    showFaults(e, "editor");
    setStale(`the editor has ${faultCount(e)}`);
    return;
  }
  state.policy = policy;
  state.version += 1;
  showFaults(null);
  setStale(null);
  presetViews(policy);
  schedule(policy);
  decide(policy);
  herdSoon();
}

function applyPresetForm(system) {
  let p;
  try {
    p = ojs.RetryPolicy.preset(system, readPresetForm());
  } catch (e) {
    showFaults(e, "form");
    setStale(`the preset form has ${faultCount(e)}`);
    return;
  }
  $("editor").value = pretty(p.toJSON());
  update();
}

function pickPreset() {
  const system = $("preset-system").value;
  if (!system) {
    $("preset-form").hidden = true;
    $("editor").value = pretty(DEFAULT_DOC);
  } else {
    const doc = ojs.RetryPolicy.preset(system, {}).toJSON();
    presetForm(doc.preset, () => applyPresetForm(system));
    $("editor").value = pretty(doc);
  }
  state.scheduleRetriesTouched = false;
  update();
}

// --- schedule and decisions ------------------------------------------------------------

const scheduleView = () => ({ svg: $("s-chart"), tbody: $("s-table").tBodies[0], caption: $("s-caption") });
const scheduleOptions = () => ({ key: $("s-key").value, log: $("s-log").checked });

function schedule(policy) {
  if (!state.scheduleRetriesTouched) $("s-retries").value = Math.min(100, Math.max(1, policy.maxRetries));
  const retries = Math.max(1, Math.min(1000, Number($("s-retries").value) || 1));
  state.rows = renderSchedule(policy, { retries, ...scheduleOptions() }, scheduleView());
  $("schedule").dataset.version = String(state.version);
}

function decide(policy) {
  const ids = ["d-action", "d-reason", "d-pattern", "d-retry", "d-delay", "d-next"];
  ids.forEach((id) => { $(id).textContent = ""; $(id).removeAttribute("data-value"); });
  $("d-error").textContent = "";
  $("decide").dataset.version = String(state.version);
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
  if (policy.presetSystem === null && policy.jitter) {
    entries.push({ name: "without jitter", policy: new ojs.RetryPolicy({ ...policy.toJSON(), jitter: false }) });
  }
  for (const box of $("h-presets").querySelectorAll("input:checked")) {
    entries.push({ name: `${box.value} (defaults)`, policy: ojs.RetryPolicy.preset(box.value, {}) });
  }
  return entries;
}

const herdOptions = () => ({ jobs: Number($("h-jobs").value), retries: Number($("h-retries").value), log: $("h-log").checked });

function herd() {
  clearTimeout(herdTimer);
  const policy = state.policy;
  $("h-error").textContent = "";
  if (!policy) return;
  try {
    const { jobs, retries, log } = herdOptions();
    const t = renderHerd($("h-charts"), herdEntries(policy), { jobs, retries, log });
    state.herd = t.results;
    state.timings.herd = { jobs, retries, engineMs: t.engineMs, drawMs: t.drawMs, perPolicyMs: t.results.map((r) => [r.name, r.ms]) };
    $("h-summary").textContent = `${t.results.length} herds of ${jobs.toLocaleString("en")} jobs × up to ${retries} retries: engine ${t.engineMs.toFixed(0)} ms, drawing ${t.drawMs.toFixed(0)} ms.`;
    $("h-summary").dataset.engineMs = t.engineMs.toFixed(1);
    $("h-summary").dataset.drawMs = t.drawMs.toFixed(1);
  } catch (e) {
    $("h-charts").replaceChildren();
    state.herd = null;
    $("h-error").textContent = `${e.code ?? "error"}${e.field ? ` (${e.field})` : ""}: ${e.message}`;
  }
  $("herd").dataset.version = String(state.version);
}

let herdTimer = 0;
function herdSoon() {
  clearTimeout(herdTimer);
  herdTimer = setTimeout(herd, HERD_DELAY_MS);
}

// --- wiring ------------------------------------------------------------------------

/** Redraws the charts at their containers' new width (no engine call). */
function redraw() {
  if (state.policy && state.rows.length) drawSchedule(state.policy, state.rows, scheduleOptions(), scheduleView());
  if (state.herd) drawHerd($("h-charts"), state.herd, herdOptions());
}

function watchWidth() {
  let width = document.body.clientWidth;
  let frame = 0;
  new ResizeObserver(() => {
    if (document.body.clientWidth === width) return;
    width = document.body.clientWidth;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(redraw);
  }).observe(document.body);
}

let editTimer = 0;
function start() {
  for (const s of ojs.presetSystems()) {
    $("preset-system").add(new Option(s, s));
    const l = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = s;
    l.append(box, ` ${s}`);
    $("h-presets").appendChild(l);
  }
  $("editor").value = pretty(DEFAULT_DOC);
  $("editor").addEventListener("input", () => { clearTimeout(editTimer); editTimer = setTimeout(update, 120); });
  $("editor").addEventListener("scroll", () => { $("editor-marks").scrollTop = $("editor").scrollTop; });
  $("preset-system").addEventListener("change", pickPreset);
  $("s-retries").addEventListener("input", () => { state.scheduleRetriesTouched = true; state.policy && schedule(state.policy); });
  for (const id of ["s-key", "s-log"]) $(id).addEventListener("input", () => state.policy && schedule(state.policy));
  for (const id of ["d-attempt", "d-type", "d-code", "d-timeout", "d-now", "d-jitter", "d-jitter-value"]) {
    $(id).addEventListener("input", () => state.policy && decide(state.policy));
  }
  $("h-run").addEventListener("click", herd);
  for (const id of ["h-jobs", "h-retries", "h-log"]) $(id).addEventListener("input", herdSoon);
  $("h-presets").addEventListener("input", herdSoon);
  watchWidth();
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
