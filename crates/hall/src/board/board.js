// The board's page (/board/<id>): its record, chart and time machine from
// the hub's /board/<id>/... routes (every instant computed by the hub with
// the core's engine: this script only shows it), and the arbiter's
// commands through /api/command. Element ids: docs/hall-hub.md.
"use strict";
const $ = (id) => document.getElementById(id);
const board = decodeURIComponent(location.pathname.replace(/^\/board\//, "").replace(/\/.*$/, ""));
const query = new URLSearchParams(location.search);
// A hall screen's token (never put into the shared link).
const token = query.get("token");
const base = "/board/" + encodeURIComponent(board) + "/";
let session = {arbiters: false, user: null, csrf: null};
let record = null;
let asked = 0;

function withToken(path) {
  return token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
}
function set(element, text) { element.textContent = text; }
function fail(text) { const e = $("error"); e.hidden = !text; set(e, text || ""); }
// Game time in ms as H:MM:SS.mmm.
function gameTime(ms) {
  const p = (n, w) => String(n).padStart(w || 2, "0");
  const s = Math.floor(ms / 1000);
  return Math.floor(s / 3600) + ":" + p(Math.floor(s / 60) % 60) + ":" + p(s % 60) + "." + p(ms % 1000, 3);
}
function clockOfDay(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
}
async function getJson(path) {
  const r = await fetch(withToken(path), {credentials: "same-origin"});
  let answer = {};
  try { answer = await r.json(); } catch (e) {}
  if (!r.ok || answer.ok === false) throw new Error(answer.error || ("the hub answered " + r.status));
  return answer;
}
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}
function showRecord() {
  set($("control"), record.control + (record.control_prose ? " (" + record.control_prose + ")" : ""));
  const slider = $("tm-slider");
  slider.max = String(record.end_ms);
  const moves = $("moves-body");
  moves.replaceChildren();
  for (const m of record.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = m.number;
    cell(tr, m.number);
    for (const side of ["white", "black"]) {
      const e = m[side];
      cell(tr, e ? (e.san || "(move)") : "", side + " san");
      cell(tr, e ? e.clk : "", side + " clk");
      cell(tr, e ? e.used : "", side + " used");
    }
    moves.appendChild(tr);
  }
  const rows = $("record-body");
  rows.replaceChildren();
  for (const r of record.rows) {
    const tr = document.createElement("tr");
    tr.dataset.seq = r.seq;
    tr.dataset.tMs = r.t_ms;
    tr.className = r.kind;
    cell(tr, r.seq);
    cell(tr, clockOfDay(r.wall_ms), "time-of-day");
    cell(tr, r.game_time, "game-time");
    cell(tr, r.kind, "kind");
    cell(tr, r.side, "side");
    cell(tr, r.white, "white");
    cell(tr, r.black, "black");
    cell(tr, r.who, "who");
    cell(tr, r.what + (r.reason ? " (" + r.reason + ")" : ""), "what");
    tr.addEventListener("click", () => seek(r.t_ms));
    rows.appendChild(tr);
  }
  $("chart").src = withToken(base + "chart.svg");
}
function showInstant(at) {
  set($("tm-game-time"), at.game_time);
  set($("tm-time-of-day"), clockOfDay(at.wall_ms));
  for (const side of ["white", "black"]) {
    const td = $("tm-" + side);
    set(td, at[side].text + (at[side].flag_ms != null ? " (flag)" : ""));
    td.dataset.ms = at[side].remaining_ms == null ? "" : String(at[side].remaining_ms);
    td.dataset.moves = String(at[side].moves);
    td.classList.toggle("running", at.running === side);
  }
  set($("tm-running"), at.running || (at.started ? "none (stopped)" : "none (not started)"));
  $("tm-running").dataset.side = at.running || "";
  set($("tm-moves"), "White " + at.white.moves + ", Black " + at.black.moves);
  const words = [];
  if (!at.started) words.push("not started");
  if (at.paused) words.push("paused");
  for (const side of at.flags) words.push(side + "'s flag fell at " + gameTime(at[side].flag_ms));
  set($("tm-state"), words.join("; ") || "running");
  set($("tm-fen"), at.fen || "none: the record has no e-board moves");
  $("tm-fen").dataset.fen = at.fen || "";
  $("tm-slider").value = String(at.t_ms);
  const link = "/board/" + encodeURIComponent(board) + "?at=" + at.t_ms;
  $("tm-link").href = link;
  for (const tr of document.querySelectorAll("#record-body tr")) tr.classList.toggle("at", Number(tr.dataset.seq) === at.row);
  // The instant shown, for tests and bookmarks.
  $("time-machine").dataset.t = String(at.t_ms);
  $("time-machine").dataset.report = JSON.stringify(at.report);
}
async function seekBy(param) {
  const mine = ++asked;
  try {
    const at = await getJson(base + "at.json?" + param);
    if (mine === asked) { fail(""); showInstant(at); }
  } catch (e) { if (mine === asked) fail(e.message); }
}
function seek(tMs) { return seekBy("t=" + Math.max(0, Math.round(tMs))); }
// "1:23:45", "23:45", "12.5" in ms; null when it is not a time.
function parseTime(text) {
  const parts = text.trim().split(":");
  if (parts.length < 1 || parts.length > 3 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return null;
  let seconds = 0;
  for (const p of parts) seconds = seconds * 60 + Number(p);
  return Math.round(seconds * 1000);
}
function setupTimeMachine() {
  let timer = null;
  $("tm-slider").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => seek(Number($("tm-slider").value)), 80);
  });
  $("tm-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const ms = parseTime($("tm-instant").value);
    if (ms == null) { fail("give the instant as H:MM:SS or M:SS"); return; }
    if ($("tm-kind").value === "game") { seek(ms); return; }
    // A time of day on the game's day (the browser's time zone).
    const day = new Date(record ? record.created_wall_ms : Date.now());
    day.setHours(0, 0, 0, 0);
    let wall = day.getTime() + ms;
    if (record && wall < record.created_wall_ms - 12 * 3600000) wall += 86400000;
    seekBy("wall=" + wall);
  });
}

// The arbiters' login and commands, as on the arbiters' page.
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
function reply(text, ok) { const p = $("reply"); p.textContent = text; p.dataset.ok = ok ? "true" : "false"; }
function errorText(error) {
  if (!error) return "refused";
  if (typeof error === "string") return error;
  return (error.kind ? error.kind + ": " : "") + (error.message || JSON.stringify(error));
}
function showSession() {
  const inside = !!session.user;
  document.body.classList.toggle("logged-in", inside);
  $("login").hidden = !session.arbiters || inside;
  $("logged-in").hidden = !inside;
  $("commands").hidden = !inside;
  set($("whoami"), session.user || "");
  const off = $("arbiters-off");
  off.hidden = session.arbiters !== false || !session.hint;
  set(off, session.hint || "");
}
async function send(body) {
  const what = board + " " + body.command;
  reply(what + ": sending...", true);
  $("reply").dataset.ok = "pending";
  let status, answer;
  try { [status, answer] = await post("/api/command", Object.assign({board}, body)); }
  catch (e) { reply(what + ": the hub cannot be reached", false); return; }
  if (status === 401) { session.user = null; showSession(); }
  reply(what + ": " + (answer.ok ? "ok" : errorText(answer.error)), !!answer.ok);
  if (answer.ok) load();
}
function setupCommands() {
  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.target;
    set($("login-error"), "");
    let status, answer;
    try { [status, answer] = await post("/api/login", {user: f.elements["user"].value, password: f.elements["password"].value}); }
    catch (err) { set($("login-error"), "the hub cannot be reached"); return; }
    f.elements["password"].value = "";
    if (status === 200 && answer.ok) {
      session = {arbiters: true, user: answer.user, csrf: answer.csrf};
      showSession();
      load();
    } else set($("login-error"), answer.error || "refused (" + status + ")");
  });
  $("logout").addEventListener("click", async () => {
    try { await post("/api/logout", {}); } catch (e) {}
    session.user = null; session.csrf = null;
    showSession();
  });
  const f = $("commands");
  f.addEventListener("submit", (e) => e.preventDefault());
  const on = (action, body) => f.querySelector('[data-action="' + action + '"]').addEventListener("click", () => send(body()));
  // As the card's and the row's button: says an arbiter is on the way (the
  // daemon refuses, saying why, when no call stands).
  on("ack-call", () => ({command: "ack-call"}));
  on("pause", () => ({command: "pause"}));
  on("resume", () => ({command: "resume"}));
  on("adjust", () => ({command: "adjust", side: f.elements["side"].value, time: f.elements["time"].value, moves: f.elements["moves"].value}));
  on("adjust-by", () => ({command: "adjust-by", side: f.elements["side"].value, time: f.elements["delta"].value}));
  on("undo", () => ({command: "undo"}));
  on("note", () => ({command: "note", text: f.elements["note"].value}));
  on("set-result", () => ({command: "set-result", result: f.elements["result"].value, termination: f.elements["termination"].value}));
}

async function load() {
  set($("status"), "loading...");
  try {
    record = await getJson(base + "record.json");
  } catch (e) {
    set($("status"), "no record");
    fail(e.message + (session.user || token ? "" : " (log in as an arbiter below)"));
    return;
  }
  fail("");
  showRecord();
  set($("status"), "record of " + record.rows.length + " rows");
  const at = query.get("at");
  const time = $("time-machine").dataset.t;
  seek(at != null && time == null ? Number(at) : time != null ? Number(time) : record.end_ms);
}
async function start() {
  set($("board-id"), board);
  document.title = "chessclock hall: board " + board;
  setupTimeMachine();
  setupCommands();
  try { session = await (await fetch("/api/session", {credentials: "same-origin"})).json(); } catch (e) {}
  showSession();
  load();
}
start();
