// The event desk (/desk): rounds, loading pairings, the review, sending
// (after a confirm that says what changes), the scheduled start, closing
// a round, corrections and the results' disagreements with the boards.
// The broadcast: the round's public delay and what the platform said of
// each game pushed (/broadcast.json, every 5 s).
// Talks to /rounds.json, /review.json, /results.json, /broadcast.json and
// /api/rounds/* with the session's CSRF token (log in on the boards' page).
"use strict";
(function () {
  let csrf = null;
  let review = null;
  const $ = (id) => document.getElementById(id);
  const say = (text) => { $("desk-status").textContent = text; };
  const cell = (row, text) => { const td = row.insertCell(); td.textContent = text == null ? "" : String(text); return td; };

  async function post(path, body) {
    const answer = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf || "" },
      body: JSON.stringify(body),
    });
    let value = {};
    try { value = await answer.json(); } catch (_) { value = { ok: false, error: answer.statusText }; }
    value.status = answer.status;
    return value;
  }

  async function session() {
    const value = await (await fetch("/api/session", { credentials: "same-origin" })).json();
    csrf = value.csrf;
    $("desk-user").textContent = value.user ? "arbiter: " + value.user : "not logged in (log in on the boards' page)";
  }

  async function rounds() {
    const event = await (await fetch("/rounds.json")).json();
    const body = $("rounds").tBodies[0];
    body.replaceChildren();
    for (const round of event.rounds || []) {
      const row = body.insertRow();
      cell(row, round.round + (round.round === event.current ? " (current)" : ""));
      cell(row, round.status);
      cell(row, round.games);
      cell(row, round.results + (round.corrections.length ? " (" + round.corrections.length + " corrected)" : ""));
      cell(row, round.start_at_ms ? new Date(round.start_at_ms).toLocaleString() : "");
      const links = cell(row, "");
      for (const file of ["round.pgn", "bulletin.pgn", "results.trf", "results.trf26", "results.res", "results.csv", "results.json"]) {
        const a = document.createElement("a");
        a.href = "/rounds/" + round.round + "/" + file;
        a.textContent = file;
        links.append(a, " ");
      }
    }
  }

  // The current round's results that the desk and a board's own record
  // disagree on (results.json): flagged, never settled here.
  async function flags() {
    const answer = await fetch("/results.json");
    const list = $("disagreements");
    list.replaceChildren();
    const value = answer.ok ? await answer.json() : {};
    for (const d of value.disagreements || []) {
      const item = document.createElement("li");
      item.className = d.corrected ? "" : "problem";
      item.textContent = "round " + value.round + ", board " + d.board + (d.id ? " (" + d.id + ")" : "") +
        ": the desk has " + d.desk + ", the board's " + (d.source === "state" ? "state" : "final PGN") +
        " says " + d.board_record + (d.corrected ? " (settled by a correction)" : ": not settled");
      list.append(item);
    }
    $("desk-flags").hidden = !list.children.length;
  }

  function show(value) {
    review = value;
    $("desk-review").hidden = false;
    $("review-round").textContent = value.round;
    $("review-summary").textContent = (value.status || "") + ": " + value.changes +
      " board(s) would change, " + value.kept + " game(s) started or over are kept";
    const body = $("plans").tBodies[0];
    body.replaceChildren();
    for (const plan of value.plans) {
      const row = body.insertRow();
      cell(row, plan.board);
      cell(row, plan.id || "none");
      cell(row, plan.white);
      cell(row, plan.black);
      let text = plan.notes.join("; ");
      if (plan.problem) { text += (text ? "; " : "") + "WARNING: " + plan.problem; row.className = "problem"; }
      cell(row, (plan.commands.length ? "sends: " : "nothing sent: ") + text);
    }
    $("unpaired").textContent = value.unpaired.length ? "Hall boards without a pairing: " + value.unpaired.join(", ") : "";
  }

  async function refreshReview() {
    const answer = await fetch("/review.json");
    if (answer.ok) show(await answer.json());
  }

  const readFile = (input) => input.files.length ? input.files[0].text() : Promise.resolve("");

  $("load").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const value = await post("/api/rounds/load", {
      round: Number(form.round.value), pairings: await readFile(form.file),
      boards: await readFile(form.boards), control: form.control.value,
    });
    if (value.ok) { show(value.review); say("round " + value.review.round + " loaded"); } else say(value.error);
    rounds();
  });

  $("send").addEventListener("click", async () => {
    if (!review) return;
    const first = await post("/api/rounds/send", { round: review.round });
    if (!first.ok) { say(first.error); return; }
    show(first.review);
    const changes = first.review.plans.filter((p) => p.commands.length)
      .map((p) => "board " + p.board + ": " + p.notes.join("; ")).join("\n");
    if (!window.confirm("Send round " + first.review.round + " to the boards?\n" +
      (changes || "nothing changes") + "\n" + first.review.kept + " game(s) started or over are left as they are.")) return;
    const sent = await post("/api/rounds/send", { round: review.round, confirm: true, changes: first.review.changes });
    if (sent.review) show(sent.review);
    say(sent.ok ? "sent" : (sent.error || (sent.boards || []).filter((b) => !b.ok).map((b) => "board " + b.board + ": " + b.error).join("; ")));
    rounds();
    refreshReview();
  });

  $("set-start").addEventListener("click", async () => {
    if (!review) return;
    const at = $("start-at").value ? new Date($("start-at").value).getTime() : null;
    if (!confirm(at === null ? "Cancel the round's start on every board not started?"
      : "Start every board of round " + review.round + " not started at " + new Date(at).toLocaleString() + "?")) return;
    const value = await post("/api/rounds/start", { round: review.round, at_ms: at, force: $("start-force").checked });
    const failed = (value.boards || []).filter((b) => !b.ok);
    say(value.ok ? "start " + (at === null ? "cancelled" : "set") + " on " + (value.boards || []).filter((b) => !b.skipped).length + " board(s)"
      : (value.error || failed.map((b) => "board " + b.board + (b.id ? " (" + b.id + ")" : "") + ": " + b.error).join("; ")));
    rounds();
  });

  $("close").addEventListener("click", async () => {
    if (!review || !window.confirm("Close round " + review.round + "? Its results are frozen; later changes are corrections.")) return;
    const value = await post("/api/rounds/close", { round: review.round });
    say(value.ok ? "round closed" : value.error);
    rounds();
  });

  $("correct").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const value = await post("/api/rounds/correct", {
      round: Number(form.round.value), board: Number(form.board.value),
      result: form.result.value, termination: form.termination.value,
    });
    say(value.ok ? "corrected" : value.error);
    rounds();
    flags();
  });

  // The push's status: the delay in force, and per game what lichess said.
  async function broadcast() {
    const answer = await fetch("/broadcast.json", { credentials: "same-origin" });
    if (!answer.ok) return;
    const value = await answer.json();
    const push = value.push || {};
    const delay = value.delay || {};
    $("broadcast-summary").textContent =
      "public delay: " + Math.round((delay.current_ms || 0) / 1000) + " s" +
      (delay.round_seconds == null ? " (the hub's)" : " (this round's)") +
      (delay.results_immediately ? ", results at once" : "") +
      (push.enabled ? "; push: " + push.state + (push.last_error ? " (" + push.last_error + ")" : "") +
        (push.unpushed && push.unpushed.length ? "; no lichess round for: " + push.unpushed.join(", ") : "")
        : "; no push to a platform");
    const body = $("pushed").tBodies[0];
    body.replaceChildren();
    for (const [board, game] of Object.entries(push.boards || {})) {
      const row = body.insertRow();
      row.dataset.board = board;
      cell(row, board);
      cell(row, game.number);
      cell(row, game.round);
      const said = cell(row, game.accepted ? "accepted" : "refused: " + (game.error || "no answer"));
      said.className = game.accepted ? "accepted" : "refused";
      cell(row, game.moves);
      cell(row, game.pushed_wall_ms ? new Date(game.pushed_wall_ms).toLocaleTimeString() : "");
    }
  }

  $("delay").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const text = form.seconds.value.trim();
    const value = await post("/api/rounds/delay", {
      round: Number(form.round.value), seconds: text === "" ? null : Number(text),
    });
    say(value.ok ? "delay set: " + Math.round(value.current_delay_ms / 1000) + " s in force" : value.error);
    broadcast();
  });

  session().then(rounds).then(refreshReview).then(flags).then(broadcast).catch((error) => say(String(error)));
  setInterval(() => { broadcast().catch(() => {}); }, 5000);
})();
