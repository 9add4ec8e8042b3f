// engram-bench report: filters, search and per-question expansion. Plain DOM, no library, nothing fetched.
(function () {
  "use strict";
  var P = null; // the expansion data, decoded on first use (an expansion or a search), not at page load
  var loading = null;
  var rows = Array.prototype.slice.call(document.querySelectorAll("#questions .q"));
  var paired = document.getElementById("questions").getAttribute("data-sides") === "2";

  // The data is gzipped JSON in base64: the browser's own DecompressionStream inflates it, nothing is fetched.
  function payload() {
    if (!loading) {
      var text = atob(document.getElementById("payload").textContent.trim());
      var bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      loading = new Response(inflated).text().then(function (json) { P = JSON.parse(json); return P; });
    }
    return loading;
  }
  var SHOWN_OPTIONS = 6; // the most probable options of a decision; the rest on hover
  var searchText = null; // built on first search: row text plus the text of every line it showed

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var name in attrs) {
        if (attrs[name] !== null && attrs[name] !== undefined) node.setAttribute(name, attrs[name]);
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function fmt(p) { return (typeof p === "number") ? p.toFixed(p >= 0.9995 || p < 0.0005 ? 2 : 3) : String(p); }
  function day(iso) { return iso ? String(iso).slice(0, 10) : "open"; }

  // ------------------------------------------------------------------------------------------- filters

  var fCategory = document.getElementById("f-category");
  var fLabel = document.getElementById("f-label");
  var fScored = document.getElementById("f-scored");
  var fSearch = document.getElementById("f-search");
  var fCount = document.getElementById("f-count");

  function labelMatches(tr, want) {
    if (!want) return true;
    var a = tr.getAttribute("data-label0") === "CORRECT";
    if (!paired) return tr.getAttribute("data-label0") === want;
    var b = tr.getAttribute("data-label1") === "CORRECT";
    switch (want) {
      case "a_only": return a && !b;
      case "b_only": return b && !a;
      case "discordant": return a !== b;
      case "both": return a && b;
      case "neither": return !a && !b;
    }
    return true;
  }

  function buildSearchText() {
    searchText = rows.map(function (tr, i) {
      var parts = [tr.textContent];
      P.rows[i].s.forEach(function (cell) {
        (cell.l || []).forEach(function (line) { parts.push(P.strings[line[0]]); });
      });
      return parts.join(" ").toLowerCase();
    });
  }

  function apply() {
    var cat = fCategory.value, want = fLabel.value, scoredOnly = fScored.checked;
    var q = fSearch.value.trim().toLowerCase();
    if (q && searchText === null) {
      payload().then(function () { if (searchText === null) buildSearchText(); apply(); });
      return;
    }
    var shown = 0;
    rows.forEach(function (tr, i) {
      var ok = (!cat || tr.getAttribute("data-category") === cat) && labelMatches(tr, want) &&
        (!scoredOnly || tr.getAttribute("data-scored") === "1") && (!q || searchText[i].indexOf(q) >= 0);
      tr.hidden = !ok;
      var detail = tr.nextElementSibling;
      if (detail && detail.classList.contains("detail")) detail.hidden = !ok;
      if (ok) shown++;
    });
    fCount.textContent = shown + " of " + rows.length + " questions";
  }

  [fCategory, fLabel, fScored].forEach(function (c) { c.addEventListener("change", apply); });
  fSearch.addEventListener("input", apply);
  document.getElementById("f-collapse").addEventListener("click", function () {
    rows.forEach(function (tr) { if (tr.classList.contains("open")) toggle(tr); });
  });

  // ------------------------------------------------------------------------------------------- turns

  function turnOf(conv, id) { return (P.turns[conv] || {})[id]; }

  function turnText(conv, id) {
    var t = turnOf(conv, id);
    if (!t) return el("div", { class: "turn-text missing" }, id + ": turn text not recorded in a trace");
    return el("div", { class: "turn-text" },
      el("strong", null, t.speaker), " · session " + t.session + (t.date ? " (" + t.date + ")" : "") + " · " + id + ": ",
      t.text);
  }

  function turnRef(conv, id, evidence) {
    var button = el("button", { type: "button", class: "turn-ref" + (evidence ? " ev" : ""),
      title: evidence ? "in the question's evidence" : "not in the question's evidence" },
      id + (evidence ? " ✓ evidence" : ""));
    var shownText = null;
    button.addEventListener("click", function (event) {
      event.stopPropagation();
      if (shownText) { shownText.remove(); shownText = null; return; }
      shownText = turnText(conv, id);
      button.parentNode.parentNode.insertBefore(shownText, button.parentNode.nextSibling);
    });
    return button;
  }

  // ------------------------------------------------------------------------------------------- facts

  function sessionOf(conv, messageId) {
    var t = turnOf(conv, messageId);
    return t ? t.session : null;
  }

  // A decision arrives as [question, target, chosen, option set, probabilities, {fallback, error, text}?].
  function decisionsOf(item) {
    if (!item.expanded) {
      item.expanded = (item.decisions || []).map(function (r) {
        var options = P.optsets[r[3]], probs = {};
        options.forEach(function (o, i) { probs[o] = r[4][i]; });
        var extra = r[5] || {};
        return { question: r[0], target: r[1], chosen: r[2], probs: probs,
          fallback: extra.fallback, error: extra.error, text: extra.text };
      });
    }
    return item.expanded;
  }

  function decisionRows(decisions) {
    var table = el("table", null, el("tr", null, el("th", null, "question"), el("th", null, "target"),
      el("th", null, "options (probability)")));
    decisions.forEach(function (d) {
      var opts = el("span");
      var ranked = Object.keys(d.probs).sort(function (x, y) { return d.probs[y] - d.probs[x]; });
      ranked.slice(0, SHOWN_OPTIONS).forEach(function (o, i) {
        if (i) opts.appendChild(document.createTextNode(" · "));
        opts.appendChild(el("span", { class: o === d.chosen ? "chosen p" : "p" }, o + " " + fmt(d.probs[o])));
      });
      var rest = ranked.slice(SHOWN_OPTIONS);
      if (rest.length) {
        opts.appendChild(el("span", { class: "src", title: rest.map(function (o) { return o + " " + fmt(d.probs[o]); }).join(", ") },
          " +" + rest.length + " more, each ≤ " + fmt(d.probs[rest[0]])));
      }
      var flags = (d.fallback ? " fallback" : "") + (d.error ? " error: " + d.error : "");
      table.appendChild(el("tr", null, el("td", null, d.question), el("td", null, d.target || "—"),
        el("td", null, opts, flags ? el("span", { class: "gate-blocked" }, flags) : null)));
    });
    return table;
  }

  var GATES = { blocked_temporal: "temporal", blocked_cardinality: "cardinality", blocked_agreement: "agreement" };

  function historyItem(e, row) {
    var rest = {};
    Object.keys(e).forEach(function (k) { if (k !== "event" && k !== "message_id") rest[k] = e[k]; });
    var text;
    if (GATES[e.event]) {
      text = el("span", { class: "gate-blocked" }, "gate blocked: " + GATES[e.event] +
        (rest.relation ? " (relation " + rest.relation + (rest.by ? " from " + rest.by : "") + ")" : ""));
    } else if (e.event === "close") {
      text = el("span", { class: "gate-passed" }, "gates passed, closed: " + (rest.reason || "?") +
        (rest.by ? " by " + rest.by : "") + (rest.belief !== undefined ? " (belief " + fmt(rest.belief) + ")" : "") +
        (rest.p !== undefined ? " (p " + fmt(rest.p) + ")" : ""));
    } else {
      var detail = Object.keys(rest).map(function (k) {
        return k + " " + (typeof rest[k] === "number" ? fmt(rest[k]) : JSON.stringify(rest[k]));
      }).join(", ");
      text = el("span", null, e.event + (detail ? ": " + detail : ""));
    }
    var session = sessionOf(row.c, e.message_id);
    var later = row.cp !== null && session !== null && session > row.cp;
    return el("li", null, text, " ", el("span", { class: "src" }, e.message_id ? "at " + e.message_id : ""),
      later ? el("span", { class: "later" }, " (after this question)") : null);
  }

  function factLine(items, id) {
    var it = items[id];
    return el("li", null, el("code", null, id), " ", it ? it.fact.text : "(not in the trace)",
      it && it.fact.valid_until ? el("span", { class: "src" }, " · closed " + day(it.fact.valid_until) +
        (it.fact.closed_reason ? " (" + it.fact.closed_reason + ")" : "")) : null);
  }

  function chain(items, id) {
    // Forward: who closed this fact, and who closed that one; backward: what this fact closed.
    var forward = [], seen = {}, cur = items[id];
    seen[id] = true;
    while (cur && cur.fact.closed_by && !seen[cur.fact.closed_by]) {
      seen[cur.fact.closed_by] = true;
      forward.push(cur.fact.closed_by);
      cur = items[cur.fact.closed_by];
    }
    var back = (items[id] && items[id].superseded) || [];
    if (!forward.length && !back.length) return null;
    var box = el("div", { class: "chain" });
    if (back.length) {
      var ol = el("ul"); back.forEach(function (b) { ol.appendChild(factLine(items, b)); });
      box.appendChild(el("div", null, el("strong", null, "this fact closed:"), ol));
    }
    if (forward.length) {
      var ul = el("ul"); forward.forEach(function (f) { ul.appendChild(factLine(items, f)); });
      box.appendChild(el("div", null, el("strong", null, "closed by (chain):"), ul));
    }
    return box;
  }

  function factPanel(sideIndex, detail, row) {
    var items = (P.items[sideIndex] || {})[row.c] || {};
    var id = detail.fact_id;
    var it = items[id];
    var via = detail.via ? " · found by " + detail.via + (typeof detail.score === "number" ? " " + fmt(detail.score) : "") : "";
    if (!it) return el("div", { class: "src missing" }, "fact " + id + via + " — not explained in the trace");
    var f = it.fact;
    var summary = el("summary", null, "fact " + id + " · belief " + fmt(f.belief) + " · valid " + day(f.valid_from) +
      " → " + day(f.valid_until) + (f.closed_reason ? " (" + f.closed_reason + ")" : "") +
      (f.tentative ? " · tentative" : "") + (f.disputed ? " · disputed" : "") + via);
    var body = el("div", { class: "fact-body" });
    body.appendChild(el("div", null, "kind " + f.kind + " · " + f.temporal_status + " · " + f.durability +
      " · said " + day(f.said_at) + " · source " + f.source_message_id +
      (it.models && it.models.length ? " · decided by " + it.models.join(", ") : "") + " · as of the end of the run"));
    if (decisionsOf(it).length) {
      body.appendChild(el("strong", null, "decisions that created it"));
      body.appendChild(decisionRows(decisionsOf(it)));
    }
    if (f.closed_by) {
      var closer = items[f.closed_by];
      var closing = closer ? decisionsOf(closer).filter(function (d) { return d.target === id; }) : [];
      body.appendChild(el("strong", null, "decisions that closed it (fact " + f.closed_by + ")"));
      body.appendChild(closing.length ? decisionRows(closing) : el("div", { class: "missing" }, "not in the trace"));
    }
    if (it.history && it.history.length) {
      var ul = el("ul");
      it.history.forEach(function (e) { ul.appendChild(historyItem(e, row)); });
      body.appendChild(el("strong", null, "history (gates, belief, closes)"));
      body.appendChild(ul);
    }
    var c = chain(items, id);
    if (c) { body.appendChild(el("strong", null, "superseded chain")); body.appendChild(c); }
    if (it.same_as && it.same_as.length) {
      var same = el("ul"); it.same_as.forEach(function (m) { same.appendChild(factLine(items, m)); });
      body.appendChild(el("strong", null, "same_as"));
      body.appendChild(same);
    }
    return el("details", { class: "fact" }, summary, body);
  }

  // ------------------------------------------------------------------------------------------- expansion

  function sidePanel(sideIndex, row) {
    var side = P.sides[sideIndex], cell = row.s[sideIndex];
    var evidence = row.ev || [];
    var box = el("div", { class: "detail-side" }, el("h3", null, (paired ? "AB"[sideIndex] + ": " : "") + side.label));
    if (!cell.l) {
      box.appendChild(el("p", { class: "missing" }, "Lines " + (cell.why || "not recorded")));
      return box;
    }
    if (!cell.l.length) box.appendChild(el("p", { class: "missing" }, "no lines shown"));
    var ol = el("ol", { class: "lines" }), covered = {};
    cell.l.forEach(function (line) {
      var sources = line[1], detail = line[2];
      var hit = (sources || []).some(function (s) { return evidence.indexOf(s) >= 0; });
      var li = el("li", { class: hit ? "hit" : null }, el("div", { class: "line-text" }, P.strings[line[0]]));
      var src = el("div", { class: "src" }, "source ");
      if (sources === null) src.appendChild(el("span", { class: "missing" }, cell.srcwhy || "not recorded"));
      else if (!sources.length) src.appendChild(el("span", { class: "missing" }, "unknown"));
      else sources.forEach(function (s) { covered[s] = true; src.appendChild(turnRef(row.c, s, evidence.indexOf(s) >= 0)); });
      li.appendChild(src);
      if (detail && detail.fact_id) li.appendChild(factPanel(sideIndex, detail, row));
      ol.appendChild(li);
    });
    box.appendChild(ol);
    var missed = evidence.filter(function (e) { return !covered[e]; });
    if (row.ev === null) box.appendChild(el("p", { class: "missing evidence-missed" }, "question evidence not recorded"));
    else if (missed.length && cell.l.every(function (line) { return line[1] !== null; })) {
      var p = el("div", { class: "evidence-missed" }, el("span", null, "evidence not among the lines: "));
      missed.forEach(function (e) { p.appendChild(turnRef(row.c, e, true)); });
      box.appendChild(p);
    }
    if (!side.traced && side.system === "engram") box.appendChild(el("p", { class: "missing" }, side.trace_note));
    return box;
  }

  function toggle(tr) {
    var next = tr.nextElementSibling;
    if (tr.classList.contains("open")) {
      if (next && next.classList.contains("detail")) next.remove();
      tr.classList.remove("open");
      return;
    }
    tr.classList.add("open");
    return payload().then(function () {
      if (!tr.classList.contains("open") || (tr.nextElementSibling && tr.nextElementSibling.classList.contains("detail"))) return;
      var row = P.rows[Number(tr.getAttribute("data-i"))];
      var sides = el("div", { class: "detail-sides" });
      P.sides.forEach(function (_, i) { sides.appendChild(sidePanel(i, row)); });
      tr.parentNode.insertBefore(el("div", { class: "detail", "data-key": row.k }, sides), tr.nextSibling);
    });
  }

  document.getElementById("questions").addEventListener("click", function (event) {
    var tr = event.target.closest(".q");
    if (tr) toggle(tr);
  });
  document.getElementById("questions").addEventListener("keydown", function (event) {
    var tr = event.target.closest && event.target.closest(".q");
    if (tr && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); toggle(tr); }
  });

  // #q=<question key> opens that question (a link a reviewer can send).
  var m = /^#q=(.+)$/.exec(location.hash);
  if (m) {
    var key = decodeURIComponent(m[1]);
    rows.forEach(function (tr) {
      if (tr.getAttribute("data-key") === key) toggle(tr).then(function () { tr.scrollIntoView(); });
    });
  }
  document.body.setAttribute("data-ready", "1");
  window.__viewReadyMs = performance.now();
})();
