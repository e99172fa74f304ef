// The hall as a grid of board cards (issue 31): loaded after hall.js, whose
// state and helpers it reads (boards, seats, remaining, clock, needs...).
// hall.js's render() calls renderCards(ids) with the boards in the page's
// order. One card per board: its number (a link to /board/ID), the
// players with titles and ratings (the round's pairings), both clocks in
// big digits, the running side (a mark and the words "to move"), moves and
// stage, the e-board's position as a picture (/public/picture/board.svg,
// drawn by the hub), and the states an arbiter acts on as coloured badges
// with words and a shape each. The arbiters' page switches between the
// cards and the table (select#view, remembered; ?view=table in the page's
// address) and can show only the boards with a problem (input#problems).
// <body data-mode="screen"> (/screen) shows big cards without controls or
// links, a page at a time, turning every ?seconds=N (default 15). The
// spectators' page (/spectator) has the cards and the table as the
// arbiters' page has, without links (a board's page is live data, for
// arbiters and hall screens).
// The hooks (ids, classes, data- attributes) are in docs/hall-hub.md.
"use strict";
const screenMode = mode === "screen";
// Whether a card links to its board's page.
const linked = !screenMode && mode !== "spectators";
const cards = {};  // id -> {card, parts}
// The states a card shows, most urgent first: [kind, shape]. The shape
// goes before the words, so a state is told by colour, shape and words.
const SHAPES = {
  call: "\u25B2", flag: "\u25C6", offline: "\u25A0", lost: "\u2716", restarted: "\u21BB",
  low: "\u25D4", finding: "\u25C7", stale: "\u25CC", paused: "\u2016", scheduled: "\u25F7",
  result: "\u2714",
};

// The states of a board the card shows: [kind, words], most urgent first.
function cardStates(p) {
  const s = p.snapshot || {}, st = p.state || {};
  const out = [];
  const done = finished(p);
  if (arbiters && s.arbiter_called) {
    const at = wallOf(p, st.arbiter_called_at_ms);
    const ack = callAck(p);
    out.push(["call", "ARBITER CALL" + (at !== null ? " " + timeOfDay(at) : "") + (ack ? " - " + ackText(ack) : "")]);
  }
  if (!done) {
    for (const f of s.flags || []) {
      const at = arbiters ? flagTime(p, f) : null;
      out.push(["flag", "FLAG " + f + (at !== null ? " " + timeOfDay(at) : "")]);
    }
  }
  const status = hostStatus(p);
  if (arbiters && status !== "online" && status !== "unknown") out.push(["offline", "HOST " + status.toUpperCase()]);
  if (arbiters && status === "online") {
    for (const d of s.devices || []) if (!d.connected) out.push(["lost", d.role + " LOST"]);
    if (st.eboard && st.eboard.connected === false && !(s.devices || []).some(d => d.role === "eboard")) out.push(["lost", "eboard LOST"]);
  }
  if (arbiters) {
    const saving = savingTrouble(p);
    if (saving) out.push(["lost", saving.saving ? "DISK FULL" : "NOT SAVING"]);
    const disagree = eboardDisagrees(p);
    if (disagree) out.push(["lost", "E-BOARD " + disagree[0] + " half-moves, clock " + disagree[1]]);
    if (restarted(p) && !done) out.push(["restarted", "RESTARTED - resume"]);
  }
  if (!done && urgency(p)[0] === 4) out.push(["low", "LOW TIME"]);
  if (arbiters && !done) for (const finding of hostFindings(p)) out.push(["finding", "HOST: " + finding]);
  const staleAt = boardStaleSince(p);
  if (staleAt !== null) out.push(["stale", "STALE - as of " + timeOfDay(staleAt)]);
  if (done) {
    const r = st.result || {};
    const text = r.result || (st.over && st.over.result) || "";
    const why = r.termination && r.termination !== "normal" ? " (" + r.termination + ")" : "";
    out.push(["result", "RESULT " + text + why]);
  } else if ((s.paused || st.paused) && s.started && !restarted(p) && !(s.flags || []).length) {
    out.push(["paused", "PAUSED"]);
  }
  const startAt = st.scheduled_start_unix_ms;
  if (!s.started && startAt && !done) {
    out.push(["scheduled", startAt > Date.now() ? "STARTS in " + clock(startAt - Date.now()) : "START due"]);
  }
  return out;
}
// A board an arbiter should look at: any state but paused, scheduled, a
// result.
function problem(p) {
  return cardStates(p).some(([kind]) => !["paused", "scheduled", "result"].includes(kind));
}

// The board's own page (the other half of issue 31), with a hall
// screen's token when the page has one.
function boardHref(id) {
  return "board/" + encodeURIComponent(id) + (token ? "?token=" + encodeURIComponent(token) : "");
}

function element(tag, className, parent) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (parent) parent.appendChild(e);
  return e;
}

function makeCard(id) {
  const card = element("article", "card");
  card.id = "card-" + id;
  card.dataset.board = id;
  card.tabIndex = 0;
  const head = element("header", "card-head", card);
  const number = element(linked ? "a" : "span", "card-number", head);
  number.id = "card-" + id + "-title";
  if (linked) number.href = boardHref(id);
  card.setAttribute("aria-labelledby", number.id);
  const idText = element("span", "card-id", head);
  const states = element("ul", "card-states", card);
  const parts = {number, idText, states, sides: {}};
  for (const side of ["white", "black"]) {
    const box = element("div", "side " + side, card);
    const who = element("div", "who", box);
    const mark = element("span", "mark", who);
    mark.setAttribute("aria-hidden", "true");
    const title = element("b", "player-title", who);
    const name = element("span", "player-name", who);
    const rating = element("span", "player-rating", who);
    const time = element("div", "time", box);
    const count = element("div", "count", box);
    parts.sides[side] = {box, mark, title, name, rating, time, count};
  }
  const foot = element("div", "card-foot", card);
  parts.picture = element("img", "card-board", foot);
  parts.picture.hidden = true;
  parts.picture.width = 160;
  parts.picture.height = 160;
  parts.result = element("div", "card-result", foot);
  if (arbiters) {
    const controls = element("div", "card-controls controls", card);
    for (const [action, label] of [["ack-call", "Acknowledge call"], ["start", "Start"], ["pause", "Pause"], ["resume", "Resume"], ["correct", "Correct..."]]) {
      const b = element("button", "", controls);
      b.type = "button";
      b.dataset.action = action;
      b.textContent = label;
      b.addEventListener("click", () => action === "correct" ? openCorrection(id) : send(id, {command: action}));
    }
    parts.resume = controls.querySelector('[data-action="resume"]');
    parts.ack = controls.querySelector('[data-action="ack-call"]');
    parts.ack.hidden = true;
  }
  // Enter on the card opens its board's page; arrows move between cards.
  card.addEventListener("keydown", (e) => {
    if (e.target !== card) return;
    if (e.key === "Enter" && linked) { location.href = boardHref(id); return; }
    const step = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1}[e.key];
    if (!step) return;
    const shown = Array.from($("cards").children).filter(c => !c.hidden);
    const next = shown[shown.indexOf(card) + step];
    if (next) { next.focus(); e.preventDefault(); }
  });
  cards[id] = {card, parts};
  return cards[id];
}

function fillCard(id) {
  const p = boards[id].payload || {}, s = p.snapshot || {}, st = p.state || {};
  const {card, parts} = cards[id] || makeCard(id);
  const states = cardStates(p);
  const kinds = states.map(([kind]) => kind);
  const classes = ["card"].concat(kinds.map(k => "state-" + k));
  const running = s.started && s.running && !s.paused && !over(p) ? s.running : null;
  if (running) classes.push("running");
  const position = boards[id].position;
  const src = position && position.fen
    ? "public/picture/board.svg?fen=" + encodeURIComponent(position.fen) + (position.last ? "&last=" + encodeURIComponent(position.last) : "")
    : "";
  if (src) classes.push("has-board");
  const className = classes.join(" ");
  if (card.className !== className) card.className = className;
  card.dataset.states = kinds.join(" ");
  card.dataset.top = kinds[0] || "";
  card.dataset.running = running || "";
  // The number: the round's, else the id (with the id when they differ).
  const seat = seats[id] || {};
  const number = seat.number != null ? String(seat.number) : null;
  const idNumber = (id.match(/(\d+)$/) || [])[1];
  set(parts.number, number !== null ? number : id);
  set(parts.idText, number !== null && Number(idNumber) !== Number(number) ? id : "");
  card.dataset.number = number ?? "";
  // The states, as badges: shape and words.
  const text = states.map(([kind, words]) => kind + ":" + words).join("|");
  if (parts.states.dataset.text !== text) {
    parts.states.dataset.text = text;
    parts.states.replaceChildren();
    for (const [kind, words] of states) {
      const li = element("li", "state", parts.states);
      li.dataset.state = kind;
      const shape = element("span", "shape", li);
      shape.textContent = SHAPES[kind] || "";
      shape.setAttribute("aria-hidden", "true");
      li.append(words);
    }
  }
  const [white, black] = players(p, id);
  const names = {white, black};
  const staleAt = boardStaleSince(p);
  for (const side of ["white", "black"]) {
    const part = parts.sides[side];
    const cls = "side " + side + (running === side ? " running" : "");
    if (part.box.className !== cls) part.box.className = cls;
    set(part.mark, running === side ? "\u25B6" : side === "white" ? "\u25CB" : "\u25CF");
    set(part.title, seat[side + "_title"] || "");
    set(part.name, names[side] || (side === "white" ? "White" : "Black"));
    set(part.rating, seat[side + "_rating"] != null ? String(seat[side + "_rating"]) : "");
    set(part.time, clock(remaining(p, side), tenthsBelow(p)));
    const title = staleAt !== null ? "as of " + timeOfDay(staleAt) + ": not live" : "";
    if (part.time.title !== title) part.time.title = title;
    const moves = s[side + "_moves"], stage = s[side + "_stage"];
    set(part.count, (running === side ? "to move \u00B7 " : "") + (moves ?? 0) + " moves" + (stage ? " \u00B7 stage " + stage : ""));
  }
  // The e-board's position, drawn by the hub; none without an e-board.
  if (parts.picture.dataset.src !== src) {
    parts.picture.dataset.src = src;
    if (src) parts.picture.src = src; else parts.picture.removeAttribute("src");
    parts.picture.hidden = !src;
    parts.picture.alt = position && position.fen
      ? "position" + (position.last ? ", last move " + position.last.slice(0, 2) + "-" + position.last.slice(2, 4) : "") : "";
  }
  card.dataset.last = position && position.last ? position.last : "";
  const result = st.result ? st.result.result : st.over ? st.over.why : "";
  set(parts.result, result);
  if (parts.resume) set(parts.resume, s.arbiter_called ? "Resume (answer call)" : "Resume");
  // Acknowledging is for a call no arbiter answered yet.
  if (parts.ack && parts.ack.hidden !== !callOpen(p)) parts.ack.hidden = !callOpen(p);
  return card;
}

// The view: the cards (default) or the table; ?view= in the address
// first, then what was chosen last.
const viewSelect = $("view");
function view() { return screenMode ? "cards" : (viewSelect && viewSelect.value === "table" ? "table" : "cards"); }
function showView() {
  document.body.classList.toggle("view-cards", view() === "cards");
  document.body.classList.toggle("view-table", view() === "table");
}
if (viewSelect) {
  const asked = new URLSearchParams(location.search).get("view");
  viewSelect.value = asked === "table" || asked === "cards" ? asked : stored("view") === "table" ? "table" : "cards";
  viewSelect.addEventListener("change", () => { store("view", viewSelect.value); showView(); render(); });
}
showView();
const problemsBox = $("problems");
if (problemsBox) {
  problemsBox.checked = stored("problems") === "on";
  problemsBox.addEventListener("change", () => { store("problems", problemsBox.checked ? "on" : "off"); render(); });
}

function renderCards(ids) {
  const grid = $("cards");
  if (!grid) return;
  for (const id of Object.keys(cards)) {
    if (!(id in boards)) { cards[id].card.remove(); delete cards[id]; }
  }
  const only = !!(problemsBox && problemsBox.checked);
  const shownIds = [];
  const wanted = ids.map((id) => {
    const card = fillCard(id);
    const hide = only && !problem(boards[id].payload || {});
    if (rows[id] && rows[id].tr.hidden !== hide) rows[id].tr.hidden = hide;
    if (!hide) shownIds.push(id);
    card.dataset.filtered = hide ? "yes" : "";
    return card;
  });
  const current = Array.from(grid.children);
  if (wanted.length !== current.length || wanted.some((c, i) => c !== current[i])) {
    for (const c of wanted) grid.appendChild(c);
  }
  const none = $("no-problems");
  if (none) none.hidden = !(only && ids.length && !shownIds.length);
  if (screenMode) turnPages(shownIds); else for (const c of wanted) c.hidden = c.dataset.filtered === "yes";
}

// The hall screen's pages: as many rows of cards as the window holds
// (the grid's columns a row; each row as tall as its tallest card, as the
// grid lays it out with every card shown), turning every ?seconds=N (1 to
// 3600, default 15).
const params = new URLSearchParams(location.search);
const turnEvery = Math.min(3600, Math.max(1, Number(params.get("seconds")) || 15)) * 1000;
let screenPage = 0, pageStarts = [0], turnedAt = Date.now(), layoutKey = "";
// The index of each page's first card.
function measurePages(ids) {
  const grid = $("cards");
  for (const id of ids) cards[id].card.hidden = false;
  const style = getComputedStyle(grid);
  const columns = Math.max(1, style.gridTemplateColumns.split(" ").filter(Boolean).length);
  const gap = parseFloat(style.rowGap) || 0;
  const room = window.innerHeight - grid.getBoundingClientRect().top - 8;
  const starts = [0];
  let used = 0;
  for (let from = 0; from < ids.length; from += columns) {
    const row = ids.slice(from, from + columns).map(id => cards[id].card.offsetHeight);
    const height = Math.max(1, ...row);
    if (used > 0 && used + gap + height > room) { starts.push(from); used = height; }
    else used += (used > 0 ? gap : 0) + height;
  }
  return starts;
}
function turnPages(ids) {
  const key = ids.join(" ") + "@" + window.innerWidth + "x" + window.innerHeight;
  if (key !== layoutKey) {
    layoutKey = key;
    pageStarts = ids.length ? measurePages(ids) : [0];
  }
  const pages = pageStarts.length;
  if (Date.now() - turnedAt >= turnEvery) { screenPage += 1; turnedAt = Date.now(); }
  screenPage %= pages;
  const from = pageStarts[screenPage], to = pageStarts[screenPage + 1] ?? ids.length;
  const pageSize = to - from;
  ids.forEach((id, i) => {
    const hide = i < from || i >= to;
    if (cards[id].card.hidden !== hide) cards[id].card.hidden = hide;
  });
  for (const id of Object.keys(cards)) if (!ids.includes(id)) cards[id].card.hidden = true;
  const label = $("screen-page");
  if (label) {
    set(label, pages > 1 ? "page " + (screenPage + 1) + " of " + pages : "");
    label.dataset.page = String(screenPage + 1);
    label.dataset.pages = String(pages);
    label.dataset.size = String(pageSize);
  }
}
window.addEventListener("resize", () => { layoutKey = ""; render(); });
