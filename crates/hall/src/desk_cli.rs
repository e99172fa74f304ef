//! `chessclock-hall round ...`: the event desk from the command line, as
//! on the page (`/desk`): it logs in to the running hub (`--hub URL`,
//! `--user`, the password from standard input's first line or
//! `--password-file`) and calls the desk's API (`crate::desk` in the
//! library): load a round's pairings, review them, send them (after a
//! confirm, or `--yes`), set the round's start, close it, correct a result,
//! set the round's broadcast delay.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{json, Value};

#[derive(clap::Args, Debug)]
pub struct RoundArgs {
    /// The running hub's address.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    hub: String,
    /// The arbiter who logs in.
    #[arg(long)]
    user: String,
    /// A file whose first line is the arbiter's password (else standard
    /// input's first line).
    #[arg(long)]
    password_file: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Load a round's pairings (TRF16, TRF26 or CSV) into the event and
    /// make it the current round; prints the review.
    Load {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        /// The pairings file.
        #[arg(long)]
        pairings: PathBuf,
        /// Which hall board plays which pairing board: CSV `board,id`.
        #[arg(long)]
        boards: Option<PathBuf>,
        /// The control for boards without one of their own.
        #[arg(long)]
        control: Option<String>,
    },
    /// Print the current round's review: which board gets which game,
    /// what is missing, what a sending would change.
    Review,
    /// Send the current round's pairings to the boards: prints what
    /// changes and asks first (a board whose game of the round started
    /// or is over is never touched).
    Send {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        /// Send without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Set the round's scheduled start (a wall instant: Unix ms) and send
    /// it to every paired board whose game has not started, or clear it
    /// and cancel theirs (`--at none`).
    Start {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        #[arg(long)]
        at: String,
        /// Start even where the Pi's clock is not known to be
        /// NTP-synchronised.
        #[arg(long)]
        force: bool,
    },
    /// Close a round: its results are frozen.
    Close {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
    },
    /// Set the round's own broadcast delay: the public feed (spectators,
    /// /public/..., the lichess push) shows each game as it was this many
    /// seconds ago; `--seconds none` falls back to the hub's
    /// --delay-seconds.
    Delay {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        /// Whole seconds (0 allowed), or `none`.
        #[arg(long)]
        seconds: String,
    },
    /// Correct a result (kept among the round's corrections).
    Correct {
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        round: u32,
        #[arg(long)]
        board: u32,
        #[arg(long)]
        result: String,
        #[arg(long, default_value = "normal")]
        termination: String,
    },
}

type Client = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
>;

struct Session {
    client: Client,
    base: String,
    cookie: String,
    csrf: String,
}

async fn call(
    client: &Client,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> anyhow::Result<(u16, Vec<String>, Value)> {
    let mut request = hyper::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = match body {
        Some(body) => {
            request = request.header("content-type", "application/json");
            Full::new(Bytes::from(body.to_string()))
        }
        None => Full::new(Bytes::new()),
    };
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        client.request(request.body(body)?),
    )
    .await
    .context("the hub did not answer within 60 s")?
    .with_context(|| format!("cannot reach the hub at {url}"))?;
    let status = answer.status().as_u16();
    let cookies = answer
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    let bytes = answer.into_body().collect().await?.to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"error": String::from_utf8_lossy(&bytes)}));
    Ok((status, cookies, value))
}

fn password(file: Option<&Path>) -> anyhow::Result<String> {
    let line = match file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .lines()
            .next()
            .unwrap_or("")
            .to_owned(),
        None => {
            if std::io::stdin().is_terminal() {
                eprintln!("Password (one line; it is shown as typed):");
            }
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        }
    };
    Ok(line)
}

async fn login(args: &RoundArgs) -> anyhow::Result<Session> {
    let client: Client =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let base = args.hub.trim_end_matches('/').to_owned();
    let password = password(args.password_file.as_deref())?;
    let (status, cookies, value) = call(
        &client,
        "POST",
        &format!("{base}/api/login"),
        &[],
        Some(&json!({"user": args.user, "password": password})),
    )
    .await?;
    if status != 200 {
        anyhow::bail!(
            "cannot log in as {}: {}",
            args.user,
            value["error"].as_str().unwrap_or("refused")
        );
    }
    let cookie = cookies
        .iter()
        .filter_map(|c| c.split(';').next())
        .collect::<Vec<_>>()
        .join("; ");
    let csrf = value["csrf"].as_str().unwrap_or("").to_owned();
    Ok(Session {
        client,
        base,
        cookie,
        csrf,
    })
}

impl Session {
    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
        let (status, _, value) = call(
            &self.client,
            "POST",
            &format!("{}{path}", self.base),
            &[("cookie", &self.cookie), ("x-csrf-token", &self.csrf)],
            Some(body),
        )
        .await?;
        Ok((status, value))
    }

    async fn get(&self, path: &str) -> anyhow::Result<(u16, Value)> {
        let (status, _, value) = call(
            &self.client,
            "GET",
            &format!("{}{path}", self.base),
            &[],
            None,
        )
        .await?;
        Ok((status, value))
    }
}

/// The review as lines.
fn print_review(review: &Value) {
    println!(
        "round {} ({}): {} board(s) would change, {} game(s) started or over are kept",
        review["round"],
        review["status"].as_str().unwrap_or("?"),
        review["changes"],
        review["kept"]
    );
    for plan in review["plans"].as_array().into_iter().flatten() {
        let board = match plan["id"].as_str() {
            Some(id) => format!("board {} ({id})", plan["board"]),
            None => format!("board {}", plan["board"]),
        };
        let mut text = plan["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("; ");
        if let Some(problem) = plan["problem"].as_str() {
            text = format!("{text}; WARNING: {problem}");
        }
        let sends = plan["commands"].as_array().is_some_and(|c| !c.is_empty());
        let what = if sends {
            "would send"
        } else {
            "nothing to send"
        };
        println!("{board}: {what}: {text}");
    }
    let unpaired: Vec<&str> = review["unpaired"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !unpaired.is_empty() {
        println!("hall boards without a pairing: {}", unpaired.join(", "));
    }
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn refused(status: u16, value: &Value) -> anyhow::Error {
    anyhow::anyhow!(
        "the hub refused ({status}): {}",
        value["error"].as_str().unwrap_or("no reason given")
    )
}

async fn run(args: RoundArgs) -> anyhow::Result<bool> {
    let session = login(&args).await?;
    match &args.action {
        Action::Load {
            round,
            pairings,
            boards,
            control,
        } => {
            let body = json!({"round": round, "pairings": read(pairings)?,
                "boards": boards.as_deref().map(read).transpose()?, "control": control});
            let (status, value) = session.post("/api/rounds/load", &body).await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            print_review(&value["review"]);
        }
        Action::Review => {
            let (status, value) = session.get("/review.json").await?;
            if status != 200 {
                anyhow::bail!("no round loaded ({status})");
            }
            print_review(&value);
        }
        Action::Send { round, yes } => {
            let (status, value) = session
                .post("/api/rounds/send", &json!({"round": round}))
                .await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            let review = &value["review"];
            print_review(review);
            if !yes {
                if !std::io::stdin().is_terminal() {
                    println!("nothing sent: give --yes to send");
                    return Ok(false);
                }
                print!("Send these to the boards? [y/N] ");
                std::io::stdout().flush()?;
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                if !matches!(line.trim(), "y" | "Y" | "yes") {
                    println!("nothing sent");
                    return Ok(false);
                }
            }
            let body = json!({"round": round, "confirm": true, "changes": review["changes"]});
            let (status, value) = session.post("/api/rounds/send", &body).await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            for board in value["boards"].as_array().into_iter().flatten() {
                match board["error"].as_str() {
                    Some(error) => println!(
                        "board {} ({}): FAILED: {error}",
                        board["board"],
                        board["id"].as_str().unwrap_or("?")
                    ),
                    None => println!(
                        "board {} ({}): sent",
                        board["board"],
                        board["id"].as_str().unwrap_or("?")
                    ),
                }
            }
            return Ok(value["ok"] == true);
        }
        Action::Start { round, at, force } => {
            let at_ms = match at.as_str() {
                "none" => Value::Null,
                text => json!(text
                    .parse::<i64>()
                    .context("--at: a wall instant in Unix ms, or `none`")?),
            };
            let (status, value) = session
                .post(
                    "/api/rounds/start",
                    &json!({"round": round, "at_ms": at_ms, "force": force}),
                )
                .await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            for board in value["boards"].as_array().into_iter().flatten() {
                let label = format!(
                    "board {} ({})",
                    board["board"],
                    board["id"].as_str().unwrap_or("-")
                );
                match (board["error"].as_str(), board["skipped"].as_str()) {
                    (Some(error), _) => println!("{label}: FAILED: {error}"),
                    (None, Some(why)) => println!("{label}: {why}"),
                    (None, None) => println!("{label}: sent"),
                }
            }
            println!("round {round}: start set");
            return Ok(value["ok"] == true);
        }
        Action::Close { round } => {
            let (status, value) = session
                .post("/api/rounds/close", &json!({"round": round}))
                .await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            println!("round {round}: closed");
        }
        Action::Delay { round, seconds } => {
            let seconds = match seconds.as_str() {
                "none" => Value::Null,
                text => json!(text
                    .parse::<u32>()
                    .context("--seconds: whole seconds (0 allowed), or `none`")?),
            };
            let (status, value) = session
                .post(
                    "/api/rounds/delay",
                    &json!({"round": round, "seconds": seconds}),
                )
                .await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            println!(
                "round {round}: broadcast delay {} (in force now: {} s)",
                match value["seconds"].as_u64() {
                    Some(s) => format!("{s} s"),
                    None => "the hub's".to_owned(),
                },
                value["current_delay_ms"].as_i64().unwrap_or(0) / 1000
            );
        }
        Action::Correct {
            round,
            board,
            result,
            termination,
        } => {
            let body = json!({"round": round, "board": board, "result": result,
                              "termination": termination});
            let (status, value) = session.post("/api/rounds/correct", &body).await?;
            if status != 200 {
                return Err(refused(status, &value));
            }
            println!("round {round}, board {board}: {result} (correction kept)");
        }
    }
    Ok(true)
}

/// `chessclock-hall round ...`.
pub fn main(args: RoundArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("chessclock-hall round: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("chessclock-hall round: {error:#}");
            ExitCode::FAILURE
        }
    }
}
