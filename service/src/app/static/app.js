// examkit: the teachers' app. Every page works without this script; it adds the copy button on a
// new key; on the review page: selecting criteria and their evidence boxes, the keyboard, zoom,
// pan and turning pages, and saving a decision in place; uploads with their progress (dropped
// files too) and a set's progress without a reload; and moving a paper's questions in place, by
// their buttons or by dragging.
"use strict";

(function () {
  const SINGLE_KEYS = "examkit.singleKeys";

  function singleKeysOn() {
    try {
      return window.localStorage.getItem(SINGLE_KEYS) !== "off";
    } catch (_) {
      return true;
    }
  }

  // --- The new key's copy button -------------------------------------------------------------
  function initCopy(root) {
    root.querySelectorAll("button[data-copy]").forEach((button) => {
      button.addEventListener("click", async () => {
        const input = document.getElementById(button.dataset.copy);
        const status = document.getElementById("copy-status");
        if (!input) return;
        input.select();
        let copied = false;
        try {
          await navigator.clipboard.writeText(input.value);
          copied = true;
        } catch (_) {
          copied = document.execCommand && document.execCommand("copy");
        }
        if (status) status.textContent = copied ? " Copied." : " Select the key and copy it.";
      });
    });
  }

  // --- Pages: zoom, pan, turn ----------------------------------------------------------------
  function initPage(figure) {
    const viewport = figure.querySelector(".viewport");
    const stage = figure.querySelector(".stage");
    const sheet = figure.querySelector(".sheet");
    const img = sheet && sheet.querySelector("img");
    if (!viewport || !stage || !sheet || !img) return;
    // Pages indexing found turned start upright (`data-turns`: quarter turns clockwise).
    const state = { zoom: 1, turns: (Number(figure.dataset.turns) || 0) % 4 };

    function apply() {
      const width = viewport.clientWidth || 600;
      const aspect = img.naturalWidth ? img.naturalHeight / img.naturalWidth : 1.414;
      const sideways = state.turns % 2 === 1;
      // The turned page's width is `width * zoom`.
      const w = sideways ? (width * state.zoom) / aspect : width * state.zoom;
      const h = w * aspect;
      sheet.style.width = w + "px";
      stage.style.width = (sideways ? h : w) + "px";
      stage.style.height = (sideways ? w : h) + "px";
      const transforms = [
        "none",
        "translate(" + h + "px, 0) rotate(90deg)",
        "translate(" + w + "px, " + h + "px) rotate(180deg)",
        "translate(0, " + w + "px) rotate(270deg)",
      ];
      sheet.style.transform = transforms[state.turns];
    }

    figure.querySelectorAll("button[data-zoom]").forEach((button) => {
      button.addEventListener("click", () => {
        const how = button.dataset.zoom;
        if (how === "in") state.zoom = Math.min(state.zoom * 1.25, 6);
        else if (how === "out") state.zoom = Math.max(state.zoom / 1.25, 0.4);
        else state.zoom = 1;
        apply();
      });
    });
    figure.querySelectorAll("button[data-rotate]").forEach((button) => {
      button.addEventListener("click", () => {
        state.turns = (state.turns + 1) % 4;
        apply();
      });
    });

    // Drag to pan.
    let drag = null;
    viewport.addEventListener("pointerdown", (event) => {
      if (event.target.closest("rect.box")) return;
      drag = { x: event.clientX, y: event.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
      viewport.classList.add("dragging");
      viewport.setPointerCapture(event.pointerId);
    });
    viewport.addEventListener("pointermove", (event) => {
      if (!drag) return;
      viewport.scrollLeft = drag.left - (event.clientX - drag.x);
      viewport.scrollTop = drag.top - (event.clientY - drag.y);
    });
    const stop = () => {
      drag = null;
      viewport.classList.remove("dragging");
    };
    viewport.addEventListener("pointerup", stop);
    viewport.addEventListener("pointercancel", stop);

    if (img.complete) apply();
    else img.addEventListener("load", apply);
    window.addEventListener("resize", apply);
  }

  // --- The review page -----------------------------------------------------------------------
  let selectedId = null;

  function rows() {
    return Array.from(document.querySelectorAll("li.criterion"));
  }

  function select(id, options) {
    const all = rows();
    const row = all.find((r) => r.dataset.criterion === id) || all[0];
    if (!row) return;
    selectedId = row.dataset.criterion;
    all.forEach((r) => {
      const on = r === row;
      r.classList.toggle("selected", on);
      if (on) r.setAttribute("aria-current", "true");
      else r.removeAttribute("aria-current");
    });
    document.querySelectorAll("rect.box").forEach((box) => {
      box.classList.toggle("selected", box.dataset.criterion === selectedId);
    });
    if (!options || options.focus !== false) row.focus({ preventScroll: false });
    const box = document.querySelector('rect.box[data-criterion="' + CSS.escape(selectedId) + '"]');
    if (box && (!options || options.reveal !== false)) {
      const viewport = box.closest(".viewport");
      const r = box.getBoundingClientRect();
      const v = viewport.getBoundingClientRect();
      viewport.scrollTop += r.top - v.top - v.height / 3;
      viewport.scrollLeft += r.left - v.left - v.width / 3;
    }
  }

  function step(by) {
    const all = rows();
    if (!all.length) return;
    const at = all.findIndex((r) => r.dataset.criterion === selectedId);
    const next = Math.min(Math.max(at + by, 0), all.length - 1);
    select(all[at < 0 ? 0 : next].dataset.criterion);
  }

  function selectedForm() {
    const row = rows().find((r) => r.dataset.criterion === selectedId);
    return row ? row.querySelector("form.decide") : null;
  }

  function prepare(action) {
    const form = selectedForm();
    if (!form) return;
    form.dataset.pending = action;
    const input = form.querySelector(".reason-input");
    input.placeholder = action === "award" ? "Why award it? Enter saves" : "Why withhold it? Enter saves";
    input.focus();
  }

  async function save(form, action) {
    const body = new URLSearchParams(new FormData(form));
    body.set("action", action);
    const token = body.get("csrf") || "";
    form.querySelectorAll("button").forEach((b) => (b.disabled = true));
    let response;
    try {
      // Not `form.action`: the form's buttons are named "action", and that name hides the property.
      response = await fetch(form.getAttribute("action"), {
        method: "POST",
        body,
        credentials: "same-origin",
        headers: { "x-requested-with": "fetch", "x-csrf-token": token },
      });
    } catch (_) {
      form.querySelectorAll("button").forEach((b) => (b.disabled = false));
      announce("The decision could not be sent. Check the connection and try again.");
      return;
    }
    const text = await response.text();
    const doc = new DOMParser().parseFromString(text, "text/html");
    const main = doc.getElementById("main");
    if (!main) {
      window.location.reload();
      return;
    }
    const decided = form.querySelector('input[name="criterion"]').value;
    document.getElementById("main").replaceWith(main);
    document.title = doc.title;
    initReview();
    // Go on to the first decision still uncertain, else stay on the one just decided.
    const conflict = document.getElementById("conflict");
    if (conflict) {
      const apply = document.getElementById("apply-mine");
      if (apply) apply.focus();
      return;
    }
    const open = rows().find((r) => r.dataset.outcome === "uncertain");
    select(open ? open.dataset.criterion : decided);
  }

  function announce(message) {
    const line = document.getElementById("status-line");
    if (line) {
      const p = document.createElement("p");
      p.className = "error";
      p.textContent = message;
      line.appendChild(p);
    }
  }

  function initReview() {
    initCopy(document);
    document.querySelectorAll("figure.page-view").forEach(initPage);
    document.querySelectorAll("rect.box").forEach((box) => {
      box.addEventListener("click", () => select(box.dataset.criterion, { reveal: false }));
    });
    document.querySelectorAll("button.show").forEach((button) => {
      button.addEventListener("click", () => select(button.dataset.criterion));
    });
    rows().forEach((row) => {
      row.addEventListener("click", (event) => {
        if (event.target.closest("form, button, a")) return;
        select(row.dataset.criterion, { focus: false });
      });
    });
    document.querySelectorAll("form.decide").forEach((form) => {
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const submitter = event.submitter;
        const action = (submitter && submitter.value) || form.dataset.pending || "accept";
        save(form, action);
      });
      const input = form.querySelector(".reason-input");
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          const action = form.dataset.pending;
          if (action) save(form, action);
        } else if (event.key === "Escape") {
          event.preventDefault();
          delete form.dataset.pending;
          select(selectedId);
        }
      });
    });
    // Closing the list puts the keyboard back on the selected criterion, wherever focus was.
    const dialog = document.getElementById("shortcuts");
    if (dialog) dialog.addEventListener("close", () => select(selectedId, { reveal: false }));
    const show = document.getElementById("show-shortcuts");
    if (show) {
      show.addEventListener("click", () => {
        const dialog = document.getElementById("shortcuts");
        if (dialog && !dialog.open) dialog.showModal();
      });
    }
    const toggle = document.getElementById("single-keys");
    if (toggle) {
      toggle.checked = singleKeysOn();
      toggle.addEventListener("change", () => {
        try {
          window.localStorage.setItem(SINGLE_KEYS, toggle.checked ? "on" : "off");
        } catch (_) {
          /* private browsing: the setting lasts for this page only */
        }
      });
    }
    if (rows().length) select(selectedId || rows()[0].dataset.criterion, { focus: false, reveal: false });
  }

  document.addEventListener("keydown", (event) => {
    if (!document.getElementById("criteria")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (!target.closest) return;
    // Keys in the open shortcuts list belong to it. Once it is closed, focus can stay on its
    // checkbox until the browser moves it: a key pressed at that moment is the page's.
    const dialog = target.closest("dialog");
    if (dialog && dialog.open) return;
    if (!dialog && target.closest("input, textarea, select, .viewport")) return;
    const single = singleKeysOn();
    const key = event.key;
    if (key === "ArrowDown" || (single && key === "j")) step(1);
    else if (key === "ArrowUp" || (single && key === "k")) step(-1);
    else if (single && key === "a") prepare("award");
    else if (single && key === "w") prepare("withhold");
    else if (key === "Enter" && target.closest("li.criterion") && !target.closest("button, a")) {
      const form = selectedForm();
      const accept = form && form.querySelector('button[value="accept"]');
      if (accept) save(form, "accept");
      else return;
    } else if (single && key === "n") {
      const next = document.getElementById("next-review");
      if (next) window.location.href = next.href;
      else return;
    } else if (single && key === "?") {
      const dialog = document.getElementById("shortcuts");
      if (dialog && !dialog.open) dialog.showModal();
    } else return;
    event.preventDefault();
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initReview);
  else initReview();

  // --- A class set's stack: uploading several files with each one's progress ------------------
  function initUpload() {
    const form = document.getElementById("upload");
    const input = document.getElementById("files");
    const list = document.getElementById("upload-progress");
    if (!form || !input || !list || !window.XMLHttpRequest || !window.FormData) return;
    const csrf = form.querySelector('input[name="csrf"]');
    function send(file) {
      const item = document.createElement("li");
      const label = document.createElement("span");
      label.textContent = file.name + ": ";
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      bar.setAttribute("aria-label", "Upload of " + file.name);
      const said = document.createElement("span");
      item.append(label, bar, said);
      list.append(item);
      return new Promise((resolve) => {
        const data = new FormData();
        data.append("csrf", csrf ? csrf.value : "");
        data.append("files", file, file.name);
        const xhr = new XMLHttpRequest();
        xhr.open("POST", form.action);
        xhr.setRequestHeader("X-Requested-With", "fetch");
        xhr.upload.addEventListener("progress", (e) => {
          if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
        });
        xhr.addEventListener("load", () => {
          bar.value = 100;
          const doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
          const outcome = doc.querySelector("#upload-outcomes li");
          if (xhr.status === 200 && outcome) {
            said.textContent = outcome.textContent.slice(file.name.length);
            item.dataset.outcome = outcome.dataset.outcome || "";
          } else {
            const error = doc.querySelector("[role=alert]");
            said.textContent = " refused, " + (error ? error.textContent : "status " + xhr.status);
            item.dataset.outcome = "refused";
          }
          resolve();
        });
        xhr.addEventListener("error", () => {
          said.textContent = " not sent: the connection failed; send it again";
          item.dataset.outcome = "refused";
          resolve();
        });
        xhr.send(data);
      });
    }
    async function sendAll(files) {
      for (const file of files) await send(file);
      refreshProgress();
    }
    form.addEventListener("submit", (event) => {
      if (!input.files || input.files.length === 0) return;
      event.preventDefault();
      const files = Array.from(input.files);
      input.value = "";
      sendAll(files);
    });
    // Files held over the form: it says it takes them (`.dropping`) until they leave or drop.
    form.addEventListener("dragover", (event) => {
      event.preventDefault();
      form.classList.add("dropping");
    });
    form.addEventListener("dragleave", (event) => {
      if (!form.contains(event.relatedTarget)) form.classList.remove("dropping");
    });
    form.addEventListener("drop", (event) => {
      event.preventDefault();
      form.classList.remove("dropping");
      if (event.dataTransfer && event.dataTransfer.files.length) sendAll(Array.from(event.dataTransfer.files));
    });
  }

  // --- A class set's page: the stack's and the marking's progress, without a reload ----------
  let refreshing = null;
  async function refreshProgress() {
    const sections = ["stack-state", "stack-report", "copies", "marking"];
    try {
      const response = await fetch(window.location.pathname, { credentials: "same-origin" });
      if (!response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const id of sections) {
        const fresh = doc.getElementById(id);
        const old = document.getElementById(id);
        // A section being filled in (a form with the focus) is left as it is until the next round.
        if (fresh && old && !old.contains(document.activeElement)) old.replaceWith(document.importNode(fresh, true));
      }
    } catch (_) {
      /* the next round tries again */
    }
  }
  function initProgress() {
    const stack = document.getElementById("stack");
    if (!stack || refreshing) return;
    refreshing = window.setInterval(() => {
      const busy = document.querySelector('[data-progress="reading"], [data-progress="marking"]');
      if (busy) refreshProgress();
    }, 4000);
  }

  // --- The paper builder: moving questions in place, by their buttons or by dragging ---------
  function initBuilder() {
    const list = document.getElementById("questions");
    const form = document.getElementById("builder");
    if (!list || !form) return;
    function questions() {
      return Array.from(list.querySelectorAll("li.paper-question"));
    }
    function renumber() {
      const rows = questions();
      rows.forEach((row, i) => {
        row.querySelectorAll("button[name=action]").forEach((b) => {
          const verb = b.value.split(":")[0];
          b.value = verb + ":" + i;
          if (verb === "up") b.disabled = i === 0;
          if (verb === "down") b.disabled = i === rows.length - 1;
        });
      });
      let note = document.getElementById("unsaved");
      if (!note) {
        note = document.createElement("p");
        note.id = "unsaved";
        note.className = "notice";
        note.setAttribute("role", "status");
        note.textContent = "Changed, not saved yet.";
        form.parentNode.insertBefore(note, form);
      }
    }
    // One step up or down: what the server does with the button's value when script is off.
    function move(row, verb) {
      if (verb === "up" && row.previousElementSibling) {
        row.parentNode.insertBefore(row, row.previousElementSibling);
      } else if (verb === "down" && row.nextElementSibling) {
        row.parentNode.insertBefore(row.nextElementSibling, row);
      } else return false;
      return true;
    }
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[name=action]");
      if (!button) return;
      const [verb] = button.value.split(":");
      const row = button.closest("li.paper-question");
      if (!move(row, verb)) return;
      event.preventDefault();
      renumber();
      const same = row.querySelector('button[value^="' + verb + ':"]');
      if (same && !same.disabled) same.focus();
      else row.querySelector("button:not([disabled])")?.focus();
    });

    // Dragging a question onto another puts it before or after that one (by which half the
    // pointer is over), as the same steps up or down the buttons make; the saved order is still
    // whatever the form sends, checked by the server. The buttons stay the keyboard's way.
    let dragged = null;
    function clearMarks() {
      questions().forEach((r) => r.classList.remove("drop-before", "drop-after"));
    }
    function after(row, event) {
      const box = row.getBoundingClientRect();
      return event.clientY > box.top + box.height / 2;
    }
    questions().forEach((row) => {
      row.draggable = true;
    });
    list.addEventListener("dragstart", (event) => {
      const row = event.target.closest && event.target.closest("li.paper-question");
      if (!row) return;
      dragged = row;
      row.classList.add("dragged");
      event.dataTransfer.effectAllowed = "move";
      // Some browsers start no drag without data.
      event.dataTransfer.setData("text/plain", row.querySelector(".q-title")?.textContent || "");
    });
    list.addEventListener("dragover", (event) => {
      const row = event.target.closest && event.target.closest("li.paper-question");
      if (!dragged || !row) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      clearMarks();
      if (row !== dragged) row.classList.add(after(row, event) ? "drop-after" : "drop-before");
    });
    list.addEventListener("dragleave", (event) => {
      if (!list.contains(event.relatedTarget)) clearMarks();
    });
    list.addEventListener("drop", (event) => {
      const row = event.target.closest && event.target.closest("li.paper-question");
      if (!dragged || !row) return;
      event.preventDefault();
      clearMarks();
      const rows = questions();
      const from = rows.indexOf(dragged);
      let to = rows.indexOf(row);
      if (from < 0 || to < 0 || row === dragged) return;
      // Over the lower half of a row the question goes after it, else before it.
      if (to > from && !after(row, event)) to -= 1;
      if (to < from && after(row, event)) to += 1;
      const verb = to < from ? "up" : "down";
      let moved = false;
      for (let steps = Math.abs(to - from); steps > 0; steps -= 1) moved = move(dragged, verb) || moved;
      if (!moved) return;
      renumber();
      const title = dragged.querySelector(".q-title")?.textContent || "The question";
      const note = document.getElementById("unsaved");
      if (note) note.textContent = "Changed, not saved yet: “" + title + "” is now question " + (to + 1) + ".";
    });
    list.addEventListener("dragend", () => {
      if (dragged) dragged.classList.remove("dragged");
      dragged = null;
      clearMarks();
    });
  }

  function initLoop() {
    initUpload();
    initProgress();
    initBuilder();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initLoop);
  else initLoop();
})();
