// The policy editor's faults: the list under it, and marks where the user
// typed what is wrong — the key of each faulty field in the editor text,
// the line of a JSON syntax error, or (for the preset form) the form's own
// field.

const $ = (id) => document.getElementById(id);
const escape = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

/** The document key a fault is at (path `preset.max_retries` → `max_retries`, `non_retryable_errors[0]` → `non_retryable_errors`). */
export function keyOf(fault) {
  const at = fault.path ?? fault.field;
  return at ? at.split(".").pop().replace(/\[.*$/, "") : null;
}

/**
 * The line (1-based) a JSON syntax fault points at: serde_json's "… at
 * line L column C"; column 0 is the end of the line before.
 */
export function syntaxLine(fault) {
  const m = /at line (\d+) column (\d+)$/.exec(fault.message ?? "");
  if (!m || fault.path) return null;
  const line = Number(m[1]);
  return Number(m[2]) === 0 && line > 1 ? line - 1 : line;
}

/** The editor's text with each faulty field's key, and each syntax fault's line, marked. */
function markEditor(text, faults) {
  const keys = new Set(faults.map(keyOf).filter(Boolean));
  const lines = new Set(faults.map(syntaxLine).filter(Boolean));
  const html = text.split("\n").map((line, i) => {
    let h = escape(line);
    for (const k of keys) {
      const quoted = escape(JSON.stringify(k));
      h = h.split(quoted).join(`<mark data-field="${escape(k)}">${quoted}</mark>`);
    }
    return lines.has(i + 1) ? `<mark class="line" data-line="${i + 1}">${h || " "}</mark>` : h;
  });
  $("editor-marks").innerHTML = html.join("\n") + "\n";
}

/** Marks each fault on the preset form's input of that option. */
function markForm(faults) {
  const form = $("preset-form");
  form.querySelectorAll(".fault").forEach((n) => n.remove());
  form.querySelectorAll("label").forEach((l) => l.classList.remove("bad"));
  for (const f of faults) {
    const l = form.querySelector(`label[data-option="${CSS.escape(keyOf(f) ?? "")}"]`);
    if (!l) continue;
    l.classList.add("bad");
    const s = document.createElement("span");
    s.className = "fault";
    s.textContent = f.message;
    l.appendChild(s);
  }
}

function faultItem(error, f, where) {
  const li = document.createElement("li");
  li.dataset.code = error.code ?? "";
  li.dataset.field = f.field ?? "";
  li.dataset.path = f.path ?? "";
  li.dataset.where = where;
  const line = where === "editor" ? syntaxLine(f) : null;
  if (line) li.dataset.line = String(line);
  const at = where === "form" ? `preset form: ${keyOf(f) ?? "(options)"}` : line ? `line ${line}` : f.path ?? "(document)";
  li.innerHTML = `<code>${escape(at)}</code> ${escape(f.message)} <small>${escape(error.code ?? "")}</small>`;
  return li;
}

/**
 * Lists `error`'s faults (none: "valid policy") and marks them where they
 * were typed: `where` is "editor" or "form". The other place's marks are
 * cleared.
 */
export function showFaults(error, where = "editor") {
  const list = $("faults");
  list.replaceChildren();
  const faults = error ? error.faults ?? [] : [];
  for (const f of faults) list.appendChild(faultItem(error, f, where));
  if (error && !faults.length) {
    const li = document.createElement("li");
    li.dataset.code = error.code ?? "";
    li.dataset.where = where;
    li.textContent = String(error.message ?? error);
    list.appendChild(li);
  }
  if (!error) {
    const li = document.createElement("li");
    li.className = "ok";
    li.textContent = "valid policy";
    list.appendChild(li);
  }
  markEditor($("editor").value, where === "editor" ? faults : []);
  markForm(where === "form" ? faults : []);
}
