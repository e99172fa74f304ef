// The hall pages: every board in a row, fed by server-sent events; the
// running clocks tick here from each state's snapshot (snapshot_wall_ms),
// no reload. <body data-mode="arbiters"> is the arbiters' page (logins,
// corrections, arbiter calls, devices, hosts, a sound on a call);
// "spectators" the read-only page; "screen" the hall screen (cards only,
// the spectators' data). The board cards are page/cards.js, loaded after
// this file. The hooks other tools rely on are listed in docs/hall-hub.md:
// keep them when changing this file.
// Never old data as live: while the hub has lost the broker (its "link"
// message) or the page has lost the hub (no message for HUB_SILENCE_MS,
// the hub sending a heartbeat every 500 ms), a banner says since when the
// data is, every clock stops at that instant and hosts read "unknown"; a
// board whose host is offline stops at its host's last seen, its devices
// "unknown".
"use strict";
const mode = document.body.dataset.mode;
const arbiters = mode === "arbiters";
const LOW_TIME_MS = 60000;
const HUB_SILENCE_MS = 1500;  // crates/hall/src/page.rs, PAGE_SILENCE
const boards = {};   // id -> {payload, received_ms}
const hosts = {};    // host -> {status, online, last_seen_ms}
const boardHosts = {};  // id -> {status, last_seen_ms}: its host's, unnamed (spectators)
// id -> {number, white, black}: the board's number in the round and the
// players its pairing names (the hub's "seats" message).
let seats = {};
// The hub's link to the broker (its "link" message; connected until told).
let link = {connected: true, since_ms: null, data_as_of_ms: null};
let heardAt = null;  // when the last message came from the hub (page clock)
let streamOpen = false;
const rows = {};     // id -> {tr, cells}
const called = new Set();
let session = {arbiters: false, user: null, csrf: null};

function $(id) { return document.getElementById(id); }
function store(key, value) { try { localStorage.setItem("chessclock-hall." + key, value); } catch (e) {} }
function stored(key) { try { return localStorage.getItem("chessclock-hall." + key); } catch (e) { return null; } }

function whole(s) {
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(r).padStart(2, "0");
}
// A time as the board's displays write it (core/src/clocktext.rs): rounded
// UP; in tenths (M:SS.t) once the time rounded up to the tenth is below
// the board's threshold (its state's tenths_below_ms; 0 or none: never).
function clock(ms, tenthsBelow) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
  ms = Math.max(0, ms);
  const tenths = Math.ceil(ms / 100);
  if (tenthsBelow > 0 && tenths * 100 < tenthsBelow) return whole(Math.floor(tenths / 10)) + "." + (tenths % 10);
  return whole(Math.ceil(ms / 1000));
}
function tenthsBelow(p) { return (p.state && p.state.tenths_below_ms) || 0; }
// The wall instant (ms) of the daemon's monotonic ms (a flag fall's
// at_ms, an arbiter call's), from the state's clock mapping.
function wallOf(p, mono) {
  if (mono === null || mono === undefined) return null;
  if (p.clock && p.clock.wall_ms !== undefined) return mono + (p.clock.wall_ms - p.clock.mono_ms);
  const s = p.snapshot || {};
  return s.snapshot_ms !== undefined && p.snapshot_wall_ms !== undefined ? p.snapshot_wall_ms - (s.snapshot_ms - mono) : null;
}
function timeOfDay(ms) {
  return new Date(ms).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"});
}
// A result decided: the game is out of the urgent boards.
function finished(p) {
  const st = p.state || {};
  return !!(st.result || (st.over && st.over.result));
}
function over(p) {
  const s = p.snapshot || {};
  return !!((p.state && (p.state.result || p.state.over)) || (s.flags && s.flags.length));
}
// Whether the page has the hub: its stream open and heard from lately.
function hubHeard() {
  return streamOpen && heardAt !== null && Date.now() - heardAt <= HUB_SILENCE_MS;
}
// Until when the hall's data as a whole is known current: null while live;
// else the earliest of the instant the hub lost the broker and the last
// message from the hub.
function staleSince() {
  let at = null;
  if (!link.connected) at = link.data_as_of_ms ?? link.since_ms ?? heardAt;
  if (!hubHeard() && heardAt !== null) at = at === null ? heardAt : Math.min(at, heardAt);
  return at;
}
function live() { return staleSince() === null && hubHeard(); }
// A host's status as the page can tell it: "online", "offline" (or what
// its topic says), or "unknown" (the hub lost the broker, or the page the
// hub: nobody knows now). A board without a known host counts as online.
function hostOf(p) {
  return p.host !== undefined ? hosts[p.host] : p.board !== undefined ? boardHosts[p.board] : undefined;
}
function hostStatus(p) {
  const h = hostOf(p);
  if (!h) return live() ? "online" : "unknown";
  const status = h.status || (h.online ? "online" : "offline");
  return status === "online" && !live() ? "unknown" : status;
}
// When the host of a board was last known alive (null: not known).
function lastSeen(p) {
  const h = hostOf(p);
  const status = hostStatus(p);
  if (status === "online") return Date.now();
  const seen = h && h.last_seen_ms !== undefined ? h.last_seen_ms : null;
  const stale = staleSince();
  if (h && h.status === "online" && stale !== null) return seen === null ? stale : Math.max(seen, stale);
  return seen;
}
// Until when a board's data is known current: null while live; else the
// hall's stale instant, or its host's last seen (its host not online).
function boardStaleSince(p) {
  let at = staleSince();
  if (hostStatus(p) !== "online") {
    const seen = lastSeen(p);
    const mark = seen === null ? (at ?? p.snapshot_wall_ms ?? Date.now()) : seen;
    at = at === null ? mark : Math.min(at, mark);
  }
  return at;
}
function remaining(p, side) {
  const s = p.snapshot || {};
  let ms = s[side + "_remaining_ms"];
  if (ms === undefined || ms === null) return null;
  if (s.running === side && s.started && !s.paused && !over(p)) {
    // Ticks up to now, or up to when the data stops being known current.
    const until = boardStaleSince(p) ?? Date.now();
    ms -= Math.max(0, until - p.snapshot_wall_ms);
  }
  return Math.max(0, ms);
}
// The players: the round's pairing of the board (the hub's), else those
// the daemon names from the game's PGN tags, else the PGN's tags.
function players(p, id) {
  const seat = seats[id];
  if (seat && (seat.white || seat.black)) return [seat.white, seat.black];
  const named = (p.state && p.state.players) || p.players;
  if (named && (named.white || named.black)) return [named.white, named.black];
  const tag = (name) => {
    const m = (p.pgn || "").match(new RegExp("^\\[" + name + " \"((?:[^\"\\\\]|\\\\.)*)\"\\]", "m"));
    const v = m ? m[1].replace(/\\(.)/g, "$1") : null;
    return v && v !== "?" ? v : null;
  };
  return [tag("White"), tag("Black")];
}
// For the urgency order: "unknown" ranks on what was last known.
function online(p) {
  const status = hostStatus(p);
  return status === "online" || status === "unknown";
}
function devicesLost(p) {
  const s = p.snapshot || {};
  return (s.devices || []).some(d => !d.connected) || (p.state && p.state.eboard && p.state.eboard.connected === false);
}
// The host's trouble saving its state (a full disk...), when it has any.
function savingTrouble(p) {
  const h = p.state && p.state.state_health;
  return h && h.saving ? h.saving : null;
}
// An e-board whose half-moves disagree with the clock's moves by more
// than one (crates/hall/src/page.rs, `eboard_disagrees`): [ply, clock's].
function eboardDisagrees(p) {
  const st = p.state || {}, s = p.snapshot || {}, e = st.eboard;
  if (!e || e.connected !== true || typeof e.ply !== "number") return null;
  const moves = (side) => (st[side] && typeof st[side].moves === "number") ? st[side].moves : s[side + "_moves"];
  const clockPly = moves("white") + moves("black");
  return Number.isFinite(clockPly) && Math.abs(e.ply - clockPly) > 1 ? [e.ply, clockPly] : null;
}
// Restarted and paused since: the arbiter resumes it (as chessclockctl
// watch marks it).
function restarted(p) {
  const s = p.snapshot || {}, st = p.state || {};
  return !!(st.restart && (s.paused || st.paused));
}
function hostFindings(p) {
  const h = p.state && p.state.host_health;
  return h && Array.isArray(h.findings) ? h.findings : [];
}
// The standing arbiter call's acknowledgment ({by, at}: who, and when as
// wall ms or null), or null: none, or no call stands.
function callAck(p) {
  const s = p.snapshot || {}, st = p.state || {};
  if (!s.arbiter_called || typeof st.arbiter_call_acknowledged_by !== "string") return null;
  return {by: st.arbiter_call_acknowledged_by, at: wallOf(p, st.arbiter_call_acknowledged_at_ms)};
}
// A call no arbiter acknowledged yet: the most urgent thing on the page.
function callOpen(p) { return !!(p.snapshot || {}).arbiter_called && !callAck(p); }
function ackText(ack) {
  return "call acknowledged by " + ack.by + (ack.at !== null ? " at " + timeOfDay(ack.at) : "");
}
// The urgency order of the hub's /boards.json (crates/hall/src/page.rs,
// `urgency`: the same ranks).
function urgency(p) {
  const s = p.snapshot || {}, st = p.state || {};
  const left = s.running ? remaining(p, s.running) : Infinity;
  const paused = !!(s.paused || st.paused);
  let rank;
  if (callOpen(p)) rank = 0;
  else if (finished(p)) rank = 10;
  else if (s.flags && s.flags.length) rank = 1;
  else if (devicesLost(p) || !online(p) || savingTrouble(p) || eboardDisagrees(p)) rank = 2;
  else if (callAck(p) || restarted(p)) rank = 3;
  else if (s.running && !paused && left < LOW_TIME_MS) rank = 4;
  else if (hostFindings(p).length) rank = 5;
  else if (paused) rank = 6;
  else if (!s.started && (st.scheduled_start_unix_ms || st.scheduled_start_ms !== null && st.scheduled_start_ms !== undefined)) rank = 7;
  else if (s.started && s.running) rank = 8;
  else rank = 9;
  return [rank, rank === 4 || rank === 8 ? left : 0];
}
// What the board needs of the arbiters, in words, most urgent first (the
// "needs" cell: words, not colour alone).
function needs(p) {
  const s = p.snapshot || {}, st = p.state || {};
  const words = [];
  const ack = callAck(p);
  if (ack) words.push(ackText(ack));
  else if (s.arbiter_called) {
    const at = wallOf(p, st.arbiter_called_at_ms);
    words.push("ARBITER CALLED" + (at !== null ? " at " + timeOfDay(at) : ""));
  }
  if (finished(p)) return words;
  for (const f of s.flags || []) {
    const at = flagTime(p, f);
    words.push("FLAG " + f + (at !== null ? " at " + timeOfDay(at) : ""));
  }
  const status = hostStatus(p);
  if (status !== "online" && status !== "unknown") words.push("HOST " + status.toUpperCase());
  else if (status === "online") {
    for (const d of s.devices || []) if (!d.connected) words.push(d.role + " LOST");
    if (st.eboard && st.eboard.connected === false && !(s.devices || []).some(d => d.role === "eboard")) words.push("eboard LOST");
  }
  const saving = savingTrouble(p);
  if (saving) words.push(saving.saving ? "DISK FULL" : "NOT SAVING");
  const disagree = eboardDisagrees(p);
  if (disagree) words.push("E-BOARD " + disagree[0] + " half-moves, clock " + disagree[1]);
  if (restarted(p)) words.push("RESTARTED - resume");
  const [rank] = urgency(p);
  if (rank === 4) words.push("LOW TIME");
  for (const finding of hostFindings(p)) words.push("HOST: " + finding);
  return words;
}
// When side's flag fell (wall ms), from the state's flag falls (its last).
function flagTime(p, side) {
  const falls = ((p.state && p.state.flag_falls) || []).filter(f => f.side === side);
  return falls.length ? wallOf(p, falls[falls.length - 1].at_ms) : null;
}
// The radios of the board's host that may transmit, in words.
function radiosOn(p) {
  const h = p.state && p.state.host_health;
  return h && Array.isArray(h.radios) ? h.radios.filter(r => r.on).map(r => r.kind + " " + r.name) : [];
}
const collator = new Intl.Collator(undefined, {numeric: true});
// Board order: the round's board numbers (the pairings'), then the ids.
function byBoard(a, b) {
  const na = seats[a] && seats[a].number, nb = seats[b] && seats[b].number;
  if (na != null && nb != null && na !== nb) return na - nb;
  if ((na != null) !== (nb != null)) return na != null ? -1 : 1;
  return collator.compare(a, b);
}
function order(ids) {
  if ($("sort") && $("sort").value === "urgency") {
    const keys = {};
    for (const id of ids) keys[id] = urgency(boards[id].payload || {});
    return ids.sort((a, b) => keys[a][0] - keys[b][0] || keys[a][1] - keys[b][1] || byBoard(a, b));
  }
  return ids.sort(byBoard);
}

const COLUMNS = arbiters
  ? ["board", "players", "needs", "time white", "time black", "moves", "stage", "flags", "arbiter", "start", "result", "devices", "host", "controls"]
  : ["board", "players", "time white", "time black", "moves", "flags", "start", "result"];

function makeRow(id) {
  const tr = document.createElement("tr");
  tr.id = "board-" + id;
  tr.dataset.board = id;
  const cells = {};
  for (const name of COLUMNS) {
    const td = document.createElement("td");
    td.className = name;
    cells[name.split(" ").pop()] = td;
    tr.appendChild(td);
  }
  if (arbiters) {
    for (const [action, label] of [["ack-call", "Acknowledge call"], ["start", "Start"], ["pause", "Pause"], ["resume", "Resume"], ["correct", "Correct..."]]) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.action = action;
      b.textContent = label;
      b.addEventListener("click", () => action === "correct" ? openCorrection(id) : send(id, {command: action}));
      cells.controls.appendChild(b);
    }
    // The board's page: its record, chart and time machine.
    const a = document.createElement("a");
    a.className = "board-page";
    a.href = "/board/" + encodeURIComponent(id);
    a.textContent = "Record...";
    cells.controls.appendChild(a);
  }
  rows[id] = {tr, cells};
  return rows[id];
}
function set(td, text) { if (td && td.textContent !== text) td.textContent = text; }

function fill(id) {
  const entry = boards[id], p = entry.payload || {}, s = p.snapshot || {}, st = p.state || {};
  const {tr, cells} = rows[id] || makeRow(id);
  const flags = s.flags || [];
  const status = hostStatus(p);
  const staleAt = boardStaleSince(p);
  const classes = [];
  if (staleAt !== null) classes.push("stale");
  if (s.started && s.running && !s.paused && !over(p)) classes.push("running");
  if (s.paused && !st.over) classes.push("paused");
  if (!s.started) classes.push("not-started");
  if (flags.length) classes.push("flag");
  if (arbiters && callOpen(p)) classes.push("arbiter-call");
  if (arbiters && callAck(p)) classes.push("call-acknowledged");
  if (arbiters && status === "online" && (devicesLost(p) || savingTrouble(p))) classes.push("device-lost");
  if (arbiters && status === "unknown") classes.push("host-unknown");
  else if (arbiters && status !== "online") classes.push("offline");
  if (finished(p)) classes.push("finished");
  const [rank] = urgency(p);
  if (rank === 4) classes.push("low-time");
  if (arbiters && restarted(p) && !finished(p)) classes.push("restarted");
  if (arbiters && eboardDisagrees(p)) classes.push("eboard-disagrees");
  if (arbiters && hostFindings(p).length) classes.push("host-finding");
  if (arbiters && radiosOn(p).length) classes.push("radios-on");
  const startAt = st.scheduled_start_unix_ms;
  if (!s.started && startAt) classes.push("scheduled");
  const className = classes.join(" ");
  if (tr.className !== className) tr.className = className;
  tr.dataset.running = s.running || "";
  const seat = seats[id];
  const number = seat && seat.number != null ? String(seat.number) : null;
  // The id alone when it ends in the board's number (b7 is board 7).
  const idNumber = (id.match(/(\d+)$/) || [])[1];
  set(cells.board, number !== null && Number(idNumber) !== Number(number) ? number + " (" + id + ")" : id);
  tr.dataset.number = number ?? "";
  const [white, black] = players(p, id);
  set(cells.players, (white || "?") + " - " + (black || "?"));
  if (cells.needs) {
    const words = needs(p);
    set(cells.needs, words.join("; "));
    tr.dataset.needs = words.length ? "yes" : "";
  }
  for (const side of ["white", "black"]) {
    set(cells[side], clock(remaining(p, side), tenthsBelow(p)));
    const cls = "time " + side + (s.running === side && !over(p) ? " running" : "");
    if (cells[side].className !== cls) cells[side].className = cls;
    const title = staleAt !== null ? "as of " + timeOfDay(staleAt) + ": not live" : "";
    if (cells[side].title !== title) cells[side].title = title;
  }
  set(cells.moves, (s.white_moves ?? "") + " / " + (s.black_moves ?? ""));
  if (cells.stage) set(cells.stage, (s.white_stage ?? "") + " / " + (s.black_stage ?? ""));
  // Each flag with the time of day it fell (arbiters: the state's falls).
  const fell = flags.map(f => { const at = arbiters ? flagTime(p, f) : null; return at === null ? "" : " at " + timeOfDay(at); });
  const flagText = flags.map((f, i) => f + (i === 0 ? " (first)" : "") + fell[i]).join(", ");
  if (cells.flags.dataset.text !== flagText) {
    cells.flags.dataset.text = flagText;
    cells.flags.replaceChildren();
    flags.forEach((f, i) => {
      if (i) cells.flags.append(", ");
      const span = document.createElement("span");
      span.textContent = f;
      if (i === 0) { span.className = "first-flag"; span.title = "fell first"; }
      cells.flags.append(span);
      if (i === 0) cells.flags.append(" (first)");
      if (fell[i]) cells.flags.append(fell[i]);
    });
  }
  if (cells.arbiter) {
    const at = s.arbiter_called ? wallOf(p, st.arbiter_called_at_ms) : null;
    const ack = callAck(p);
    set(cells.arbiter, s.arbiter_called ? "CALLED" + (at !== null ? " at " + timeOfDay(at) : "") + (ack ? ", " + ackText(ack) : "") : "");
  }
  // Acknowledging is for a call no arbiter answered yet.
  const ackButton = cells.controls && cells.controls.querySelector('[data-action="ack-call"]');
  if (ackButton && ackButton.hidden !== !callOpen(p)) ackButton.hidden = !callOpen(p);
  // A resume answers the call (as chessclockctl resume): the button says so.
  const resume = cells.controls && cells.controls.querySelector('[data-action="resume"]');
  if (resume) set(resume, s.arbiter_called ? "Resume (answer call)" : "Resume");
  set(cells.start, !s.started && startAt
    ? (startAt > Date.now() ? "in " + clock(startAt - Date.now()) : "due") + " (" + timeOfDay(startAt) + ")"
    : "");
  set(cells.result, st.result ? st.result.result + (st.result.termination && st.result.termination !== "normal" ? " (" + st.result.termination + ")" : "") : st.over ? "over: " + st.over.why : "");
  if (cells.devices) {
    const devices = (s.devices || []).map(d => d.role + (d.connected ? " ok" : " LOST"));
    if (st.eboard && !(s.devices || []).some(d => d.role === "eboard")) devices.push("eboard" + (st.eboard.connected ? " ok" : " LOST"));
    const disagree = eboardDisagrees(p);
    if (disagree) devices.push("eboard " + disagree[0] + " half-moves vs clock " + disagree[1] + ": CHECK");
    // A host not known alive now: its devices' last word is no news.
    const known = status === "online";
    set(cells.devices, known || !devices.length ? devices.join(", ") : "unknown");
    const title = known ? "" : "last known: " + devices.join(", ");
    if (cells.devices.title !== title) cells.devices.title = title;
  }
  if (cells.host) {
    const seen = lastSeen(p);
    let text = (p.host || "?") + (status === "online" ? " online" : status === "unknown" ? " unknown" : " " + status.toUpperCase());
    if (status !== "online" && seen !== null) text += ", last seen " + timeOfDay(seen) + " (" + clock(Date.now() - seen) + " ago)";
    else if (status !== "online" && status !== "unknown") text += ", last seen before the hub started";
    const saving = savingTrouble(p);
    if (saving) text += saving.saving ? ", DISK FULL: saving into the reserve" : ", NOT SAVING: " + String(saving.reason).replace(/-/g, " ");
    // The host's health (src/host.rs): radios that may transmit (a
    // finding where forbidden) and a clock not NTP-synchronised.
    const health = st.host_health;
    if (health) {
      const on = radiosOn(p);
      if (on.length) text += ", RADIO ON: " + on.join(", ") + (health.radios_policy === "forbid" ? " (FORBIDDEN)" : "");
      else if (health.radios_policy === "forbid" && (health.radios_unreadable || []).length) text += ", RADIOS UNCHECKED (forbidden)";
      if (health.ntp_synchronized === false) text += ", CLOCK NOT NTP-SYNCHRONISED";
    }
    set(cells.host, text);
    const title = (saving ? saving.message + "; " : "") + (seen !== null && status !== "online" ? "last known alive " + timeOfDay(seen) : "");
    if (cells.host.title !== title) cells.host.title = title;
  }
  return tr;
}

// The banner and the status: whether what the page shows is live.
function showLink() {
  const stale = staleSince();
  const banner = $("link");
  let text = "";
  if (heardAt === null) text = "connecting to the hub...";
  else if (!hubHeard()) text = "no connection to the hub";
  else if (!link.connected && link.data_as_of_ms === null) text = "the hub is not connected to the broker";
  else if (!link.connected) text = "hub lost the broker";
  if (text && heardAt !== null && stale !== null) text += " - data as of " + timeOfDay(stale);
  if (banner) {
    set(banner, text);
    if (banner.hidden !== !text) banner.hidden = !text;
  }
  const word = heardAt === null ? "connecting..." : text ? "stale" : "live";
  set($("status"), word);
  document.body.classList.toggle("stale", !!text);
}

function render() {
  showLink();
  const body = $("boards");
  const ids = order(Object.keys(boards));
  for (const id of Object.keys(rows)) {
    if (!(id in boards)) { rows[id].tr.remove(); delete rows[id]; }
  }
  // The table (the hall screen has only cards).
  if (body) {
    const wanted = ids.map(fill);
    const current = Array.from(body.children);
    if (wanted.length !== current.length || wanted.some((tr, i) => tr !== current[i])) {
      for (const tr of wanted) body.appendChild(tr);
    }
  }
  // The cards (page/cards.js), loaded after this file.
  if (typeof renderCards === "function") renderCards(ids);
  if (arbiters) {
    // Calls no arbiter acknowledged (an acknowledged one is on its way).
    const calls = ids.filter(id => callOpen(boards[id].payload));
    const flags = ids.filter(id => ((boards[id].payload.snapshot || {}).flags || []).length && !finished(boards[id].payload));
    set($("counts"), ids.length + " boards" + (calls.length ? ", " + calls.length + " ARBITER CALL" + (calls.length > 1 ? "S" : "") : "") + (flags.length ? ", " + flags.length + " flag" + (flags.length > 1 ? "s" : "") : ""));
    let fresh = false;
    for (const id of calls) if (!called.has(id)) { called.add(id); fresh = true; }
    for (const id of Array.from(called)) if (!calls.includes(id)) called.delete(id);
    if (fresh) beep();
  }
}

// The sound on an arbiter call (Web Audio; the switch is remembered).
let audio = null;
function beep() {
  const box = $("sound");
  if (!box || !box.checked) return;
  try {
    audio = audio || new AudioContext();
    const now = audio.currentTime;
    for (const at of [0, 0.25]) {
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.2, now + at);
      gain.gain.exponentialRampToValueAtTime(0.001, now + at + 0.2);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + at);
      osc.stop(now + at + 0.2);
    }
    document.body.dataset.beeps = String(Number(document.body.dataset.beeps || 0) + 1);
  } catch (e) {}
}

// Arbiters: session, login, logout, corrections.
function showSession() {
  const logged = !!session.user;
  document.body.classList.toggle("logged-in", logged);
  $("arbiters-off").hidden = session.arbiters;
  if (!session.arbiters) set($("arbiters-off"), "Read-only: " + (session.hint || "arbiters are not enabled on this hub."));
  $("login").hidden = !session.arbiters || logged;
  $("logged-in").hidden = !logged;
  set($("whoami"), session.user || "");
  if (!logged) $("correction").hidden = true;
  $("round-commands").hidden = !logged;
  connect();
}
async function refreshSession() {
  try {
    const r = await fetch("api/session", {credentials: "same-origin"});
    session = await r.json();
  } catch (e) { return; }
  showSession();
}
function reply(text, ok) {
  const p = $("reply");
  p.textContent = text;
  p.dataset.ok = ok ? "true" : "false";
}
async function post(path, body) {
  const r = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": session.csrf || ""},
    body: JSON.stringify(body),
  });
  let answer = {};
  try { answer = await r.json(); } catch (e) {}
  return [r.status, answer];
}
function errorText(error) {
  if (!error) return "refused";
  if (typeof error === "string") return error;
  return (error.kind ? error.kind + ": " : "") + (error.message || JSON.stringify(error));
}
async function send(board, body) {
  const what = board + " " + body.command;
  reply(what + ": sending...", true);
  $("reply").dataset.ok = "pending";
  let status, answer;
  try { [status, answer] = await post("api/command", Object.assign({board}, body)); }
  catch (e) { reply(what + ": the hub cannot be reached", false); return; }
  if (status === 401) { session.user = null; showSession(); }
  reply(what + ": " + (answer.ok ? "ok" : errorText(answer.error)), !!answer.ok);
}
// Every board at once: one command per board, each answered; the boards
// that failed are listed under the buttons.
async function sendAll(body, what) {
  const list = $("round-failed");
  list.replaceChildren();
  reply(what + ": sending to every board...", true);
  $("reply").dataset.ok = "pending";
  let status, answer;
  try { [status, answer] = await post("api/round-command", body); }
  catch (e) { reply(what + ": the hub cannot be reached", false); return; }
  if (status === 401) { session.user = null; showSession(); }
  const failed = (answer.boards || []).filter((b) => !b.ok);
  for (const b of failed) {
    const li = document.createElement("li");
    li.dataset.board = b.board;
    li.textContent = b.board + ": " + errorText(b.error);
    list.appendChild(li);
  }
  reply(what + ": " + (answer.ok ? "ok on " + (answer.boards || []).length + " board(s)"
    : answer.boards ? failed.length + " of " + answer.boards.length + " board(s) failed" : errorText(answer.error)), !!answer.ok);
}
function setupRoundCommands() {
  const f = $("round-commands");
  f.addEventListener("submit", (e) => e.preventDefault());
  f.querySelector('[data-action="pause-all"]').addEventListener("click", () => {
    if (confirm("Pause every board?")) sendAll({command: "pause"}, "pause all");
  });
  f.querySelector('[data-action="resume-all"]').addEventListener("click", () => {
    if (confirm("Resume every board?")) sendAll({command: "resume"}, "resume all");
  });
  f.querySelector('[data-action="start-all"]').addEventListener("click", () => {
    const [h, m] = (f.elements["start-time"].value || "").split(":").map(Number);
    if (!Number.isInteger(h) || !Number.isInteger(m)) { reply("start all: give the time, HH:MM", false); return; }
    const at = new Date(); at.setHours(h, m, 0, 0);
    if (at.getTime() <= Date.now()) { reply("start all: " + f.elements["start-time"].value + " has passed today", false); return; }
    if (confirm("Start every board at " + at.toLocaleTimeString() + "?"))
      sendAll({command: "start-at", at_ms: at.getTime(), force: f.elements["force"].checked}, "start all at " + f.elements["start-time"].value);
  });
}
function openCorrection(id) {
  const f = $("correction");
  f.elements["board"].value = id;
  f.elements["board-label"].value = id;
  f.hidden = false;
}
function setupArbiters() {
  const box = $("sound");
  box.checked = stored("sound") === "on";
  box.addEventListener("change", () => {
    store("sound", box.checked ? "on" : "off");
    if (box.checked) { try { audio = audio || new AudioContext(); audio.resume(); } catch (e) {} }
  });
  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.target;
    set($("login-error"), "");
    let status, answer;
    try { [status, answer] = await post("api/login", {user: f.elements["user"].value, password: f.elements["password"].value}); }
    catch (err) { set($("login-error"), "the hub cannot be reached"); return; }
    f.elements["password"].value = "";
    if (status === 200 && answer.ok) {
      session = {arbiters: true, user: answer.user, csrf: answer.csrf};
      showSession();
    } else {
      set($("login-error"), answer.error || "refused (" + status + ")");
    }
  });
  $("logout").addEventListener("click", async () => {
    try { await post("api/logout", {}); } catch (e) {}
    session.user = null; session.csrf = null;
    showSession();
  });
  const f = $("correction");
  f.addEventListener("submit", (e) => e.preventDefault());
  f.querySelector('[data-action="close"]').addEventListener("click", () => { f.hidden = true; });
  f.querySelector('[data-action="adjust"]').addEventListener("click", () => {
    send(f.elements["board"].value, {command: "adjust", side: f.elements["side"].value,
      time: f.elements["time"].value, moves: f.elements["moves"].value});
  });
  f.querySelector('[data-action="set-result"]').addEventListener("click", () => {
    send(f.elements["board"].value, {command: "set-result", result: f.elements["result"].value,
      termination: f.elements["termination"].value});
  });
  f.querySelector('[data-action="adjust-by"]').addEventListener("click", () => {
    send(f.elements["board"].value, {command: "adjust-by", side: f.elements["side"].value, time: f.elements["delta"].value});
  });
  f.querySelector('[data-action="note"]').addEventListener("click", () => {
    send(f.elements["board"].value, {command: "note", text: f.elements["note"].value});
  });
  for (const action of ["undo", "cancel-start"]) {
    f.querySelector('[data-action="' + action + '"]').addEventListener("click", () => {
      if (confirm(action === "undo" ? "Take back your last press on board " + f.elements["board"].value + "?"
        : "Cancel the scheduled start of board " + f.elements["board"].value + "?")) send(f.elements["board"].value, {command: action});
    });
  }
  setupRoundCommands();
  refreshSession();
}

const sort = $("sort");
if (sort) {
  sort.value = stored("sort") === "board" ? "board" : "urgency";
  sort.addEventListener("change", () => { store("sort", sort.value); render(); });
}
if (arbiters) setupArbiters();

// Live data (/events) is for logged-in arbiters and hall screens (a token
// in the page's address, /?token=...); before a login the arbiters' page
// shows the spectators' view. A refused stream (401, 503) is closed for
// good by the browser: ask the session again and reconnect.
const token = arbiters ? new URLSearchParams(location.search).get("token") : null;
let source = null, sourceUrl = null;
function connect() {
  const url = arbiters && (token || session.user)
    ? "events" + (token ? "?token=" + encodeURIComponent(token) : "") : "public/events";
  if (source && source.readyState !== EventSource.CLOSED && url === sourceUrl) return;
  if (source) source.close();
  sourceUrl = url;
  source = new EventSource(url);
  source.onopen = () => {
    // Everything comes again on each connection: forget what may be gone.
    for (const id of Object.keys(boards)) delete boards[id];
    for (const h of Object.keys(hosts)) delete hosts[h];
    for (const id of Object.keys(boardHosts)) delete boardHosts[id];
    seats = {};
    link = {connected: true, since_ms: null, data_as_of_ms: null};
    streamOpen = true;
    heardAt = Date.now();
    if (arbiters) refreshSession();
    render();
  };
  // The stream broke (EventSource reconnects by itself unless it was
  // refused): stale at once.
  source.onerror = () => {
    streamOpen = false;
    render();
    if (source.readyState === EventSource.CLOSED)
      setTimeout(() => { if (arbiters) refreshSession().then(connect); else connect(); }, 2000);
  };
  source.onmessage = (e) => {
    heardAt = Date.now();
    streamOpen = true;
    let m;
    try { m = JSON.parse(e.data); } catch (err) { return; }
    if (m.type === "heartbeat") return;
    if (m.type === "link") link = {connected: !!m.connected, since_ms: m.since_ms ?? null, data_as_of_ms: m.data_as_of_ms ?? null};
    if (m.type === "state") {
      // The card's position: the message's (the hub's, made once), or
      // inside the spectators' view.
      if (m.payload) boards[m.board] = {payload: m.payload, received_ms: m.received_ms, position: m.position || m.payload.position || null};
      else { delete boards[m.board]; delete boardHosts[m.board]; }
    }
    if (m.type === "seats") seats = m.seats || {};
    if (m.type === "board-host") boardHosts[m.board] = {status: m.status, last_seen_ms: m.last_seen_ms ?? null};
    if (m.type === "host") hosts[m.host] = {status: m.status || (m.online ? "online" : "offline"), online: m.online, last_seen_ms: m.last_seen_ms ?? null};
    render();
  };
}
connect();
// Tenths change every 100 ms: render as often while a clock shows them.
let ticks = 0;
setInterval(() => {
  ticks += 1;
  const tenths = Object.values(boards).some(b => {
    const p = b.payload || {}, s = p.snapshot || {};
    return s.running && clock(remaining(p, s.running), tenthsBelow(p)).includes(".");
  });
  if (tenths || ticks % 2 === 0) render();
}, 100);
