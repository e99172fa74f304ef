//! Tests of the simulated DGT board: its byte stream read back through the
//! real DGT session and move detector.

use super::*;
use chessclock_core::eboard::detect::{DetectorConfig, MoveDetector};
use chessclock_core::eboard::session::{DgtSession, SessionConfig, SessionOutput};

pub const SPECIAL_GAME: &str =
    "[Event \"test\"]\n\n1. e4 d5 2. e5 f5 3. exf6 Nc6 {comment} 4. fxg7 Bf5 \
    5. gxh8=Q Qd7 (5... Qd6 6. Qh5+) 6. Nf3 O-O-O 7. Be2 e5 8. O-O $1 *\n";

#[test]
fn pgn_sans_skips_everything_but_the_main_line() {
    let sans = pgn_sans(SPECIAL_GAME);
    assert_eq!(sans.len(), 15);
    assert_eq!(sans[8], "gxh8=Q");
    assert_eq!(sans[9], "Qd7");
    assert_eq!(sans.last().unwrap(), "O-O");
}

/// Feeds a plan's bytes through the real session and detector.
fn detect(plan: &SimPlan) -> Vec<String> {
    let mut session = DgtSession::new(SessionConfig::default());
    let mut detector = MoveDetector::new(DetectorConfig::default());
    let mut now = 0;
    session.start(now);
    let mut bytes = encode_board_dump(&plan.initial);
    for step in &plan.steps {
        bytes.extend(&step.bytes);
    }
    // Odd-sized reads, as a serial port delivers them.
    for chunk in bytes.chunks(7) {
        now += 10_000;
        for out in session.on_bytes(now, chunk) {
            if let SessionOutput::Placement(p) = out {
                detector.placement(now, &p);
            }
        }
    }
    detector.moves().into_iter().map(|m| m.san).collect()
}

#[test]
fn pgn_plans_decode_back_to_the_game_for_many_seeds() {
    let want = pgn_sans(SPECIAL_GAME);
    for seed in 0..40 {
        for turned_round in [false, true] {
            let mut opts = DgtSimOptions::new(SimScript::Pgn {
                text: SPECIAL_GAME.into(),
            });
            opts.seed = seed;
            opts.turned_round = turned_round;
            let plan = pgn_plan(SPECIAL_GAME, &opts).unwrap();
            let got: Vec<String> = detect(&plan)
                .into_iter()
                .map(|s| s.trim_end_matches(['+', '#']).to_owned())
                .collect();
            assert_eq!(got, want, "seed {seed}, turned round {turned_round}");
        }
    }
}

#[test]
fn several_games_are_played_with_the_board_set_up_again_between_them() {
    let text = "[Event \"a\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n[Event \"b\"]\n\n1. d4 d5 *\n";
    assert_eq!(
        pgn_games(text),
        vec![vec!["f3", "e5", "g4", "Qh4#"], vec!["d4", "d5"]]
    );
    for seed in 0..10 {
        let mut opts = DgtSimOptions::new(SimScript::Pgn { text: text.into() });
        opts.seed = seed;
        let plan = pgn_plan(text, &opts).unwrap();
        // Every move's last change is marked, in order.
        let lands: Vec<SimMoveEvent> = plan.steps.iter().filter_map(|s| s.lands).collect();
        assert_eq!(lands.len(), 6);
        assert_eq!(lands[4], SimMoveEvent { game: 1, ply: 1 });
        // Fed to a detector: the first game, mate; the pieces go back;
        // the start begins the second game, which is followed.
        let mut session = DgtSession::new(SessionConfig::default());
        let mut detector = MoveDetector::new(DetectorConfig::default());
        session.start(0);
        let mut now = 0;
        let mut events = Vec::new();
        let mut feed = |bytes: &[u8], now: i64, events: &mut Vec<_>| {
            for out in session.on_bytes(now, bytes) {
                if let SessionOutput::Placement(p) = out {
                    events.extend(detector.tick(now));
                    events.extend(detector.placement(now, &p));
                }
            }
        };
        feed(&encode_board_dump(&plan.initial), now, &mut events);
        for step in &plan.steps {
            now += i64::try_from(step.delay.as_micros()).unwrap();
            feed(&step.bytes, now, &mut events);
        }
        let starts = events
            .iter()
            .filter(|e| matches!(e, chessclock_core::eboard::BoardEvent::StartPosition { .. }))
            .count();
        assert_eq!(starts, 2, "seed {seed}: {events:?}");
        assert!(events
            .iter()
            .any(|e| matches!(e, chessclock_core::eboard::BoardEvent::GameEnd { .. })));
        assert!(!events
            .iter()
            .any(|e| matches!(e, chessclock_core::eboard::BoardEvent::TakeBack { .. })));
        let sans: Vec<String> = detector.moves().into_iter().map(|m| m.san).collect();
        assert_eq!(sans, vec!["d4", "d5"], "seed {seed}");
    }
}

#[test]
fn variations_really_happen() {
    let mut intermediate_seen = false;
    let mut captured_first_seen = false;
    for seed in 0..20 {
        let mut rng = StdRng::seed_from_u64(seed);
        let pos = Chess::default();
        let mv = "d4".parse::<SanPlus>().unwrap().san.to_move(&pos).unwrap();
        intermediate_seen |= gestures(&pos, mv, &mut rng).len() == 4;
        let capture_pos: Chess = chessclock_core::eboard::laws::position_from_fen(
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        )
        .unwrap();
        let mv = "exd5"
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&capture_pos)
            .unwrap();
        captured_first_seen |= gestures(&capture_pos, mv, &mut rng)[0].0 == Square::D5;
    }
    assert!(intermediate_seen && captured_first_seen);
}

#[test]
fn cli_arguments_make_options() {
    use clap::Parser as _;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        dgt: DgtSimArgs,
    }
    let cli = Cli::try_parse_from(["x", "--capture", "/tmp/a", "--raw", "--step-ms", "5"]).unwrap();
    let opts = cli.dgt.options().unwrap();
    assert_eq!(
        opts.script,
        SimScript::Capture {
            path: "/tmp/a".into(),
            format: CaptureFormat::Raw
        }
    );
    assert_eq!(opts.step, Duration::from_millis(5));
    assert!(Cli::try_parse_from(["x"]).is_err(), "a script is required");
    assert!(Cli::try_parse_from(["x", "--capture", "a", "--pgn", "b"]).is_err());
    let cli = Cli::try_parse_from(["x", "--pgn", "/nonexistent.pgn"]).unwrap();
    let err = cli.dgt.options().unwrap_err();
    assert!(err.to_string().contains("/nonexistent.pgn"), "{err}");
}

#[test]
fn illegal_pgn_is_refused_with_the_move_named() {
    let opts = DgtSimOptions::new(SimScript::Pgn {
        text: String::new(),
    });
    let err = pgn_plan("1. e4 e5 2. Ke3", &opts).unwrap_err();
    assert!(err.contains("move 3") && err.contains("Ke3"), "{err}");
}
