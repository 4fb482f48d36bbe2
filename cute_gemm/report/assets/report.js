// cute-gemm report: draws the step pages from the JSON in #data (made by cute_gemm/report/html.py).
// Pages: #summary, #<arch>/<a>-<b> (a step, or any two phases of a ladder), #<arch>/<a>-<arch>/<b>.
// Nothing is fetched: sources, diffs, numbers and images are all in this file.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("data").textContent);
  const PAGES = D.pages;
  const CONTEXT = 3; // unchanged lines shown around a change; longer runs fold
  const $ = (sel) => document.querySelector(sel);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const num = (v, d) => v.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
  const signed = (v, d) => (v > 0 ? "+" : v < 0 ? "−" : "±") + num(Math.abs(v), d);

  // ------------------------------------------------------------------------------------ addresses
  function split(key) { const i = key.indexOf(":"); return [key.slice(0, i), key.slice(i + 1)]; }
  function pairId(a, b) {
    const [fa, ia] = split(a), [fb, ib] = split(b);
    return fa === fb ? `${fa}/${ia}-${ib}` : `${fa}/${ia}-${fb}/${ib}`;
  }
  function parse(hash) {
    const h = decodeURIComponent(hash.replace(/^#/, ""));
    if (!h || h === "summary") return { kind: "summary", id: "summary" };
    const m = h.match(/^(sm\d+)\/([0-9a-z]+)-(?:(sm\d+)\/)?([0-9a-z]+)$/);
    if (m) {
      const a = `${m[1]}:${m[2]}`, b = `${m[3] || m[1]}:${m[4]}`;
      if (D.phases[a] && D.phases[b]) return { kind: "pair", a, b, id: pairId(a, b) };
    }
    return { kind: "unknown", id: h };
  }
  function stepOf(a, b) {
    const [fa, ia] = split(a), [fb, ib] = split(b);
    if (fa !== fb || !D.ladders[fa]) return null;
    return D.ladders[fa].steps.find((s) => s[0] === ia && s[1] === ib) || null;
  }
  // where a page sits in the stepping order: a pair that is not a step sits at the step ending at b
  function position(page) {
    if (page.kind === "summary") return 0;
    if (page.kind !== "pair") return -1;
    let i = PAGES.indexOf(page.id);
    if (i < 0) {
      const [fb, ib] = split(page.b);
      i = PAGES.findIndex((p) => p.startsWith(fb + "/") && p.endsWith("-" + ib));
    }
    return i;
  }

  // ------------------------------------------------------------------------------------ pieces
  function phaseName(p) { return `${p.arch} phase ${p.id}`; }

  function card(p, side) {
    return `<div class="card ${side}"><div class="key">${esc(phaseName(p))}</div>` +
      `<div class="sum">${esc(p.summary)}</div><div class="adds"><b>adds:</b> ${esc(p.adds)}</div>` +
      `<div class="file"><code>${esc(p.file)}</code></div></div>`;
  }

  function configDiff(A, B) {
    const keys = [...new Set([...Object.keys(A.config), ...Object.keys(B.config)])];
    const diff = keys.filter((k) => String(A.config[k]) !== String(B.config[k]));
    if (!keys.length) return "";
    if (!diff.length) return `<p class="dim">Config: the same tile, stages and cluster; the difference is in the code.</p>`;
    return `<p>Config: ${diff.map((k) => `<code>${esc(k)}</code> ${esc(A.config[k] ?? "–")} → ${esc(B.config[k] ?? "–")}`).join(", ")}</p>`;
  }

  function worklogTable(A, B) {
    const rows = [];
    const heads = D.worklog_shapes;
    for (const shape of heads) {
      const wa = A.wl.find((w) => w.shape === shape), wb = B.wl.find((w) => w.shape === shape);
      const ma = A.measured[shape], mb = B.measured[shape];
      if (!wa && !wb && !ma && !mb) continue;
      const wcell = (w) => (w ? esc(w.text) : `<span class="dim">no number in the worklog</span>`);
      const gainW = wa && wb ? signed(100 * (wb.tf / wa.tf - 1), 0) + "%" : "";
      const ours = (m, p) => (m && m.status === "ok" ? `${esc(m.tflops)} TFLOP/s, ${esc(m.pct)}` :
        p.arch === "sm100" ? `<span class="dim">not measured: compile-verified only</span>` : `<span class="dim">${esc(D.notes.measured)}</span>`);
      const gainO = ma && mb && ma.status === "ok" && mb.status === "ok" ? signed(100 * (mb.tf / ma.tf - 1), 1) + "%" : "";
      rows.push(`<tr><th rowspan="2">${esc(shape)}</th><td>worklog, ${esc(D.worklog_gpu)}</td><td>${wcell(wa)}</td><td>${wcell(wb)}</td><td class="num">${gainW}</td></tr>` +
        `<tr><td>ours, ${esc(gpuOf(ma, mb, A, B))}</td><td>${ours(ma, A)}</td><td>${ours(mb, B)}</td><td class="num">${gainO}</td></tr>`);
    }
    if (!rows.length) return "";
    return `<h3>The worklog's number beside ours</h3><div class="scroll"><table class="t wl"><tr><th>shape</th><th></th>` +
      `<th>${esc(phaseName(A))}</th><th>${esc(phaseName(B))}</th><th>step</th></tr>${rows.join("")}</table></div>`;
  }
  function gpuOf(ma, mb, A, B) {
    const m = (ma && ma.status === "ok" && ma) || (mb && mb.status === "ok" && mb);
    if (m) return D.files[m.file].gpu;
    return A.arch === "sm100" || B.arch === "sm100" ? "no Blackwell GPU here" : firstGpu();
  }

  function measuredTable(A, B) {
    const shapes = D.shapes.filter((s) => A.measured[s] || B.measured[s]);
    const unmeasured = [A, B].filter((p) => !Object.keys(p.measured).length);
    let out = "";
    for (const p of unmeasured) {
      out += p.arch === "sm100"
        ? `<p class="verify">${esc(phaseName(p))}: not measured, compile-verified only: ${esc(D.notes.sm100)}.</p>`
        : `<p class="warn">${esc(phaseName(p))}: ${esc(D.notes.measured)}.</p>`;
    }
    if (!shapes.length) return out;
    const cell = (m) => {
      if (!m) return `<td class="na" colspan="2">–</td>`;
      if (m.status !== "ok") return `<td class="na" colspan="2" title="${esc(m.reason)}">${esc(m.status)}: ${esc(m.reason)}</td>`;
      return `<td class="num"><b>${esc(m.tflops)}</b> <span class="dim">${esc(m.range)}</span></td><td class="num">${esc(m.pct)}</td>`;
    };
    const pair = (ma, mb, k, unit) => `${ma && ma[k] ? esc(ma[k]) : "–"} → ${mb && mb[k] ? esc(mb[k]) : "–"} ${unit}`;
    const files = new Set();
    const rows = shapes.map((s) => {
      const ma = A.measured[s], mb = B.measured[s];
      for (const m of [ma, mb]) if (m) files.add(m.file);
      const ok = ma && mb && ma.status === "ok" && mb.status === "ok";
      const x = ok ? mb.tf / ma.tf : null;
      return `<tr><th>${esc(s)}</th>${cell(ma)}${cell(mb)}` +
        `<td class="num ${x == null ? "" : x >= 1 ? "up" : "down"}">${x == null ? "" : num(x, 3) + "×"}</td>` +
        `<td class="num">${pair(ma, mb, "clock", "MHz")}</td><td class="num">${pair(ma, mb, "power", "W")}</td>` +
        `<td class="num">${pair(ma, mb, "bw", "TB/s")}</td><td class="num dim">${esc((mb && mb.vendor) || (ma && ma.vendor) || "")}</td></tr>`;
    });
    const src = [...files].map((i) => `<code>${esc(D.files[i].path)}</code> (${esc(D.files[i].gpu)}, ${esc(D.files[i].date)})`).join(", ");
    return out + `<div class="scroll"><table class="t meas"><tr><th rowspan="2">shape</th><th colspan="2">${esc(phaseName(A))}</th>` +
      `<th colspan="2">${esc(phaseName(B))}</th><th rowspan="2">B / A</th><th rowspan="2">SM clock</th><th rowspan="2">power</th>` +
      `<th rowspan="2">effective bandwidth</th><th rowspan="2">the vendor, same run (TFLOP/s)</th></tr>` +
      `<tr><th>TFLOP/s <span class="dim">(min..max)</span></th><th>% vendor</th><th>TFLOP/s <span class="dim">(min..max)</span></th><th>% vendor</th></tr>` +
      rows.join("") + `</table></div><p class="dim">Median over the interleaved rounds; % of the better of cuBLAS and cuBLASLt in the same run; ` +
      `SM clock and power while timed (NVML); effective bandwidth: A and B read once and C written once, over the time. ` +
      `– : ${esc(D.notes.measured)}. From ${src}.</p>`;
  }

  function censusChanges(A, B) {
    const ca = A.census, cb = B.census, out = [];
    if (!ca || !cb) return out;
    for (const name of D.census_rows) {
      const a = ca.census[name] || 0, b = cb.census[name] || 0;
      if (a !== b) out.push([name, a, b]);
    }
    for (const [k, label] of D.resources) {
      const a = ca.res[k], b = cb.res[k];
      if (typeof a === "number" && typeof b === "number" && a !== b) out.push([label, a, b]);
    }
    return out;
  }

  // one screen: the measured change, the worklog's, the generated code's, the source's, the counters'
  function glance(A, B) {
    const box = (title, body) => `<div class="gl"><div class="glt">${title}</div>${body}</div>`;
    const out = [];
    const meas = [];
    for (const shape of D.worklog_shapes) {
      const ma = A.measured[shape], mb = B.measured[shape];
      if (!(ma && ma.status === "ok") && !(mb && mb.status === "ok")) continue;
      const tf = (m) => (m && m.status === "ok" ? esc(m.tflops) : "–");
      const g = ma && mb && ma.status === "ok" && mb.status === "ok" ? mb.tf / ma.tf - 1 : null;
      meas.push(`<div><span class="dim">${esc(shape)}</span><br><b>${tf(ma)} → ${tf(mb)}</b> TFLOP/s` +
        (g == null ? "" : ` <span class="${g >= 0 ? "up" : "down"}">(${signed(100 * g, 1)}%)</span>`) + `</div>`);
    }
    const unmeasured = [A, B].filter((p) => !Object.keys(p.measured).length);
    if (!meas.length) {
      meas.push(unmeasured.some((p) => p.arch === "sm100") ? `<div class="verify-in">compile-verified only: nothing measured</div>`
        : `<div>${esc(unmeasured.map((p) => "phase " + p.id).join(" and ") || "these shapes")}: ${esc(D.notes.measured)}</div>`);
    } else if (unmeasured.length) {
      meas.push(`<div class="dim">${esc(unmeasured.map((p) => "phase " + p.id).join(" and "))}: ${esc(D.notes.measured)}</div>`);
    }
    const h0 = D.worklog_shapes[0];
    out.push(box(`measured (${esc(gpuOf(A.measured[h0], B.measured[h0], A, B))})`, meas.join("")));
    const wlShape = D.worklog_shapes[0];
    const wa = A.wl.find((w) => w.shape === wlShape), wb = B.wl.find((w) => w.shape === wlShape);
    out.push(box(`the worklog (${esc(D.worklog_gpu)})`, wa || wb
      ? `<div><span class="dim">${esc(wlShape)}</span><br><b>${wa ? esc(wa.tflops) : "–"} → ${wb ? esc(wb.tflops) : "–"}</b> TFLOP/s` +
        (wa && wb ? ` <span class="${wb.tf >= wa.tf ? "up" : "down"}">(${signed(100 * (wb.tf / wa.tf - 1), 1)}%)</span>` : "") +
        (!wb ? `<div class="dim">phase ${esc(B.id)} is beyond the worklog</div>` : "") + `</div>`
      : `<div class="dim">both phases are beyond the worklog</div>`));
    const ch = censusChanges(A, B);
    out.push(box("generated code", !A.census || !B.census ? `<div class="dim">no census: ${esc(A.census_why || B.census_why)}</div>`
      : ch.length ? ch.slice(0, 5).map(([l, a, b]) => `<div>${esc(l)}: <b>${num(a, 0)} → ${num(b, 0)}</b></div>`).join("") +
        (ch.length > 5 ? `<div class="dim">and ${ch.length - 5} more below</div>` : "")
      : `<div class="dim">the same census and resources</div>`));
    const st = diffStats(A, B);
    out.push(box("source", st ? `<div><b><span class="up">+${st.added}</span> <span class="down">−${st.removed}</span></b> lines</div>` +
      `<div class="dim">below the docstrings: +${st.codeAdded} −${st.codeRemoved}</div>` : `<div class="dim">the same file</div>`));
    const prof = D.profiles.find((p) => p.values[A.key] && p.values[B.key]);
    if (prof) {
      const va = prof.values[A.key], vb = prof.values[B.key], top = moved(va, vb)[0];
      const pct = (i) => (va[i] ? signed(100 * (vb[i] - va[i]) / Math.abs(va[i]), 1) + "%" : "");
      out.push(box(`Nsight Compute (${esc(prof.shape)})`, `<div>duration <b>${ncuFmt(0, va[0])} → ${ncuFmt(0, vb[0])}</b> us (${pct(0)})</div>` +
        (top != null ? `<div>moved most: ${esc(D.ncu.labels[top])} <b>${ncuFmt(top, va[top])} → ${ncuFmt(top, vb[top])}</b></div>` : "")));
    }
    return `<div class="glance">${out.join("")}</div>`;
  }
  function firstGpu() { return D.files.length ? D.files[0].gpu : "no results given"; }

  function censusTable(A, B) {
    const ca = A.census, cb = B.census;
    if (!ca && !cb) return `<p class="warn">No census: ${esc(A.census_why || B.census_why || "not computed")}.</p>`;
    const rows = [];
    const delta = (a, b) => (typeof a === "number" && typeof b === "number" && a !== b ? b - a : null);
    const row = (label, a, b, strong) => {
      const d = delta(a, b);
      const show = (v, c) => (c ? (v == null ? "–" : v === 0 ? "·" : num(v, 0)) : "–");
      rows.push(`<tr class="${d == null ? "" : "moved"}"><td>${strong ? "<b>" + esc(label) + "</b>" : esc(label)}</td>` +
        `<td class="num">${show(a, ca)}</td><td class="num">${show(b, cb)}</td>` +
        `<td class="num ${d == null ? "" : d > 0 ? "up" : "down"}">${d == null ? "" : signed(d, 0)}</td></tr>`);
    };
    for (const name of D.census_rows) {
      const a = ca ? ca.census[name] || 0 : null, b = cb ? cb.census[name] || 0 : null;
      if (a || b) row(name, a, b, delta(a, b) != null);
    }
    rows.push(`<tr class="sep"><td colspan="4"></td></tr>`);
    for (const [k, label] of D.resources) {
      const a = ca ? ca.res[k] : null, b = cb ? cb.res[k] : null;
      if (a == null && b == null) continue;
      row(label, a, b, delta(a, b) != null);
    }
    const where = [ca, cb].filter(Boolean).map((c) => `${c.target}, grid at ${c.shape}`);
    const why = [[A, ca], [B, cb]].filter(([, c]) => !c).map(([p]) => `${phaseName(p)}: ${p.census_why}`);
    return `<table class="t census"><tr><th>instruction (static count in the PTX) / resource</th><th>${esc(phaseName(A))}</th>` +
      `<th>${esc(phaseName(B))}</th><th>change</th></tr>${rows.join("")}</table>` +
      `<p class="dim">Compile-only (no GPU): ${esc([...new Set(where)].join("; "))}; registers and spills from ptxas; ` +
      `· is zero. The same numbers as <code>cute-gemm compare ${esc(A.key)} ${esc(B.key)}</code>.` +
      (why.length ? ` No census for ${esc(why.join("; "))}.` : "") + `</p>`;
  }

  // the counters in the order they moved, most first: |after - before| / max(|before|, floor)
  function moved(va, vb) {
    const S = D.ncu;
    return S.keys.map((_, i) => i).filter((i) => S.floor[i] != null && va[i] != null && vb[i] != null)
      .map((i) => [i, Math.abs(vb[i] - va[i]) / Math.max(Math.abs(va[i]), S.floor[i])])
      .filter(([, s]) => s > 0).sort((x, y) => y[1] - x[1]).map(([i]) => i);
  }
  function ncuFmt(i, v) {
    const S = D.ncu;
    return v == null ? "n/a" : num(v * S.scale[i], S.digits[i]) + (S.share[i] ? "%" : "");
  }
  function ncuTables(A, B) {
    const S = D.ncu, out = [];
    const fmt = ncuFmt;
    for (const prof of D.profiles) {
      const va = prof.values[A.key], vb = prof.values[B.key];
      if (!va || !vb) continue;
      const change = (i) => (va[i] == null || vb[i] == null || va[i] === 0 ? null : (vb[i] - va[i]) / Math.abs(va[i]));
      const movers = moved(va, vb).slice(0, 6);
      const row = (i, cls) => {
        const c = change(i);
        return `<tr class="${cls || ""}"><td>${esc(S.labels[i])}</td><td class="num">${fmt(i, va[i])}</td><td class="num">${fmt(i, vb[i])}</td>` +
          `<td class="num">${c == null ? "" : signed(100 * c, 1) + "%"}</td></tr>`;
      };
      out.push(`<div class="ncu"><h3>${esc(prof.shape)} <span class="dim">(${esc(prof.gpu)}, Nsight Compute ${esc(prof.ncu)}, ${esc(prof.date)})</span></h3>` +
        `<table class="t"><tr><th>counter</th><th>${esc(phaseName(A))}</th><th>${esc(phaseName(B))}</th><th>change</th></tr>` +
        row(0, "lead") + row(1) + movers.map((i) => row(i, "moved")).join("") +
        `<tr><td>top stall</td><td class="num">${esc(prof.top_stall[A.key] || "n/a")}</td><td class="num">${esc(prof.top_stall[B.key] || "n/a")}</td><td></td></tr>` +
        `</table><p class="dim">From <code>${esc(prof.file)}</code>; one launch each, clocks and caches left alone. ` +
        `Moved most: the largest |after − before| / max(|before|, floor), as <code>cute-gemm profile</code> ranks them.</p></div>`);
    }
    if (!out.length) {
      const any = D.profiles.length ? "No Nsight Compute profile in these results has both phases." : "No Nsight Compute profile among these results.";
      return `<p class="dim">${any}</p>`;
    }
    return `<div class="ncus">${out.join("")}</div>`;
  }

  // ------------------------------------------------------------------------------------ the diff
  function lineHtml(parts) {
    if (typeof parts === "string") return esc(parts);
    return parts.map((p) => (typeof p === "string" ? esc(p) : `<span class="${p[0]}">${esc(p[1])}</span>`)).join("");
  }
  // difflib's matching blocks -> its opcodes (what SequenceMatcher.get_opcodes() returns)
  function opcodes(blocks) {
    const ops = [];
    let i = 0, j = 0;
    for (let k = 0; k < blocks.length; k += 3) {
      const ai = blocks[k], bj = blocks[k + 1], n = blocks[k + 2];
      const tag = i < ai && j < bj ? "replace" : i < ai ? "delete" : j < bj ? "insert" : "";
      if (tag) ops.push([tag, i, ai, j, bj]);
      i = ai + n; j = bj + n;
      if (n) ops.push(["equal", ai, i, bj, j]);
    }
    return ops;
  }
  function blocksFor(sa, sb) {
    if (sa < sb) return D.diffs[`${sa}-${sb}`];
    const flat = D.diffs[`${sb}-${sa}`], out = [];
    for (let k = 0; k < flat.length; k += 3) out.push(flat[k + 1], flat[k], flat[k + 2]);
    return out;
  }
  function diffRow(la, lb, i, j, kind) {
    const L = D.sources, left = i == null ? null : L[la][i], right = j == null ? null : L[lb][j];
    const cls = kind === "equal" ? "ctx" : null;
    return `<tr><td class="ln">${i == null ? "" : i + 1}</td><td class="code ${cls || (i == null ? "empty" : "del")}">${left == null ? "" : lineHtml(left)}</td>` +
      `<td class="ln">${j == null ? "" : j + 1}</td><td class="code ${cls || (j == null ? "empty" : "add")}">${right == null ? "" : lineHtml(right)}</td></tr>`;
  }
  function diffStats(A, B) {
    const sa = A.src, sb = B.src;
    if (sa === sb) return null;
    const ops = opcodes(blocksFor(sa, sb));
    const da = D.doc_lines[sa], db = D.doc_lines[sb];
    let added = 0, removed = 0, codeAdded = 0, codeRemoved = 0;
    for (const [tag, i1, i2, j1, j2] of ops) {
      if (tag === "equal") continue;
      removed += i2 - i1; added += j2 - j1;
      codeRemoved += Math.max(0, i2 - Math.max(i1, da)); codeAdded += Math.max(0, j2 - Math.max(j1, db));
    }
    return { ops, added, removed, codeAdded, codeRemoved };
  }
  function diffTable(A, B) {
    const sa = A.src, sb = B.src;
    const st = diffStats(A, B);
    if (!st) return `<p class="dim">The same file: nothing to diff.</p>`;
    const ops = st.ops, da = D.doc_lines[sa], db = D.doc_lines[sb];
    const rows = [];  // [html, is a docstring row]
    const push = (i, j, kind) => rows.push([diffRow(sa, sb, i, j, kind), (i == null || i < da) && (j == null || j < db)]);
    ops.forEach(([tag, i1, i2, j1, j2], n) => {
      if (tag === "equal") {
        const len = i2 - i1, first = n === 0, last = n === ops.length - 1;
        const head = first ? 0 : CONTEXT, tail = last ? 0 : CONTEXT;
        if (len > head + tail + 1) {
          for (let k = 0; k < head; k++) push(i1 + k, j1 + k, "equal");
          const hidden = [];
          for (let k = head; k < len - tail; k++) hidden.push(diffRow(sa, sb, i1 + k, j1 + k, "equal"));
          foldStore[foldCount] = hidden.join("");
          rows.push([`<tr class="fold" data-fold="${foldCount++}"><td colspan="4">⋯ ${len - head - tail} unchanged lines ` +
            `(${i1 + head + 1}–${i2 - tail} → ${j1 + head + 1}–${j2 - tail}): show</td></tr>`, i2 - tail <= da && j2 - tail <= db]);
          for (let k = len - tail; k < len; k++) push(i1 + k, j1 + k, "equal");
        } else {
          for (let k = 0; k < len; k++) push(i1 + k, j1 + k, "equal");
        }
        return;
      }
      const len = Math.max(i2 - i1, j2 - j1);
      for (let k = 0; k < len; k++) push(i1 + k < i2 ? i1 + k : null, j1 + k < j2 ? j1 + k : null, tag);
    });
    // the module docstrings lead both files and are shown above: their rows start folded
    let lead = 0;
    while (lead < rows.length && rows[lead][1]) lead++;
    let body = rows.slice(lead).map((r) => r[0]).join("");
    if (lead) {
      foldStore[foldCount] = rows.slice(0, lead).map((r) => r[0]).join("");
      body = `<tr class="fold doc-fold" data-fold="${foldCount++}"><td colspan="4">⋯ the module docstrings ` +
        `(lines 1–${da} → 1–${db}, shown above): show their diff</td></tr>` + body;
    }
    return `<p class="files"><code>${esc(A.file)}</code> (${D.sources[sa].length} lines) → <code>${esc(B.file)}</code> ` +
      `(${D.sources[sb].length} lines): <span class="up">+${st.added}</span> <span class="down">−${st.removed}</span> lines, ` +
      `of which below the docstrings <span class="up">+${st.codeAdded}</span> <span class="down">−${st.codeRemoved}</span>. ` +
      `<span class="dim">Lines diffed with Python's difflib, highlighted with Pygments. Shared code (<code>common*.py</code>, ` +
      `<code>raster.py</code>) is not part of the diff.</span></p>` +
      `<table class="diff src"><colgroup><col class="lnc"><col><col class="lnc"><col></colgroup>${body}</table>`;
  }
  let foldCount = 0;
  const foldStore = {};
  document.addEventListener("click", (ev) => {
    const more = ev.target.closest && ev.target.closest("button.more");
    if (more) { more.previousElementSibling.classList.remove("clip"); more.remove(); return; }
    const tr = ev.target.closest && ev.target.closest("tr.fold");
    if (!tr) return;
    tr.insertAdjacentHTML("afterend", foldStore[tr.dataset.fold] || "");
    tr.remove();
  });

  // ------------------------------------------------------------------------------------ pages
  function renderPair(page) {
    const A = D.phases[page.a], B = D.phases[page.b];
    const step = stepOf(page.a, page.b);
    const same = A.arch === B.arch;
    const title = same ? `${A.arch} · phase ${A.id} → phase ${B.id}` : `${phaseName(A)} → ${phaseName(B)}`;
    let kind;
    if (step && step[2] === "declared") kind = `A ladder step: phase ${B.id} declares phase ${A.id} as its parent.`;
    else if (step) kind = `A ladder step: phase ${A.id} is the phase before ${B.id} in the ${A.arch} ladder (phase ${B.id} declares no parent of its own).`;
    else kind = `Not a ladder step: two phases side by side, as <code>cute-gemm compare ${esc(A.key)} ${esc(B.key)}</code> shows them.`;
    const sm100 = [A, B].some((p) => p.arch === "sm100" && !Object.keys(p.measured).length);
    const h = [];
    h.push(`<h1>${esc(title)}</h1><p class="kind">${kind}</p>`);
    if (sm100) h.push(`<p class="verify"><b>Compile-verified only:</b> ${esc(D.notes.sm100)}.</p>`);
    h.push(`<div class="cards">${card(A, "a")}<div class="arrow">→</div>${card(B, "b")}</div>`);
    h.push(glance(A, B));
    h.push(`<section class="adds"><h2>What phase ${esc(B.id)} adds, and why <span class="dim">(its docstring)</span></h2>` +
      `<div class="doc clip">${B.doc}</div><button type="button" class="more">show the whole docstring</button></section>`);
    h.push(`<section class="diff-sec"><h2>The source diff</h2>${diffTable(A, B)}</section>`);
    h.push(`<section class="census"><h2>What changed in the generated code</h2>${configDiff(A, B)}${censusTable(A, B)}</section>`);
    h.push(`<section class="numbers"><h2>The numbers</h2>${worklogTable(A, B)}<h3>Measured</h3>${measuredTable(A, B)}</section>`);
    h.push(`<section class="ncu-sec"><h2>Where the cycles went: the Nsight Compute counters that moved most</h2>${ncuTables(A, B)}</section>`);
    return { html: h.join(""), title };
  }

  function renderToc(page) {
    const cur = page.kind === "pair" ? (PAGES.includes(page.id) ? page.id : null) : page.id;
    const li = (id, label, tip) => `<li><a href="#${id}" class="${id === cur ? "cur" : ""}" title="${esc(tip || "")}">${label}</a></li>`;
    let h = `<ul>${li("summary", "summary")}</ul>`;
    for (const [fam, lad] of Object.entries(D.ladders)) {
      h += `<h4>${esc(fam)} <span class="dim">${lad.measured ? "measured" : "compile-verified"}</span></h4><ul>`;
      for (const [a, b] of lad.steps) h += li(`${fam}/${a}-${b}`, `${esc(a)} → ${esc(b)}`, D.phases[`${fam}:${b}`].adds);
      h += `</ul>`;
    }
    $("#toc").innerHTML = h;
  }

  function route() {
    const page = parse(location.hash);
    const sum = $("#summary-page"), stepEl = $("#step-page");
    let title = "summary";
    if (page.kind === "summary") {
      sum.hidden = false; stepEl.hidden = true;
    } else if (page.kind === "pair" && page.a === page.b) {
      stepEl.innerHTML = `<h1>${esc(page.a)}</h1><p class="warn">Pick two different phases to diff.</p>`;
      sum.hidden = true; stepEl.hidden = false;
    } else if (page.kind === "pair") {
      try {
        const r = renderPair(page);
        stepEl.innerHTML = r.html; title = r.title;
      } catch (err) {  // say so on the page, and in the console (the browser test fails on it)
        stepEl.innerHTML = `<h1>${esc(page.id)}</h1><p class="warn">This page could not be drawn: ${esc(err)}</p>`;
        console.error(err);
      }
      sum.hidden = true; stepEl.hidden = false;
    } else {
      stepEl.innerHTML = `<h1>No such page</h1><p class="warn">#${esc(page.id)} names no page of this report. ` +
        `Pages are #summary and #&lt;arch&gt;/&lt;a&gt;-&lt;b&gt;, e.g. <a href="#${esc(PAGES[1] || "summary")}">#${esc(PAGES[1] || "summary")}</a>.</p>`;
      sum.hidden = true; stepEl.hidden = false;
    }
    const pos = position(page);
    const prev = pos > 0 ? PAGES[pos - 1] : null;
    const next = pos >= 0 && pos < PAGES.length - 1 ? PAGES[pos + 1] : pos < 0 ? PAGES[0] : null;
    for (const [el, target] of [[$("#prev"), prev], [$("#next"), next]]) {
      el.href = "#" + (target || page.id);
      el.classList.toggle("off", !target);
    }
    $("#where").textContent = pos >= 0 ? `${pos + 1} / ${PAGES.length}` : "";
    document.title = `${title} · cute-gemm report`;
    document.body.dataset.page = page.id;
    if (page.kind === "pair") { $("#pick-a").value = page.a; $("#pick-b").value = page.b; }
    renderToc(page);
    window.scrollTo(0, 0);
  }

  function go(delta) {
    const page = parse(location.hash);
    const pos = position(page);
    const target = pos < 0 ? PAGES[0] : PAGES[pos + delta];
    if (target) location.hash = "#" + target;
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    if (ev.target.closest && ev.target.closest("select, input, textarea")) return;
    if (ev.key === "ArrowRight") { go(1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { go(-1); ev.preventDefault(); }
  });
  function pick() {
    const a = $("#pick-a").value, b = $("#pick-b").value;
    location.hash = "#" + pairId(a, b);
    if (document.activeElement && document.activeElement.blur) document.activeElement.blur(); // ← / → step again
  }
  $("#pick-go").addEventListener("click", pick);
  $("#pick-a").addEventListener("change", pick);
  $("#pick-b").addEventListener("change", pick);
  // the picker starts on the first step
  if (PAGES[1]) { const p = parse("#" + PAGES[1]); if (p.kind === "pair") { $("#pick-a").value = p.a; $("#pick-b").value = p.b; } }
  window.addEventListener("hashchange", route);
  // for the browser test: the opcodes the diffs are laid out from, to hold against difflib's own
  window.cuteGemmReport = { opcodes: (sa, sb) => opcodes(blocksFor(sa, sb)) };
  route();
})();
