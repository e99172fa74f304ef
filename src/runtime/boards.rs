//! How the configured boards become board cores: what a core needs of the
//! config, a control's text resolved with the presets, and every board
//! built at start (its stored game rebuilt paused, or a new game).

use super::*;

/// What a board's core needs of the config.
pub fn board_setup(
    config: &Config,
    board: &crate::config::BoardConfig,
    state_notice: Option<&str>,
) -> BoardSetup {
    BoardSetup {
        id: board.id.clone(),
        buttons: board.buttons.clone().map(String::from),
        displays: board
            .displays
            .iter()
            .map(|display| chessclock_core::board::DisplaySetup {
                name: String::from(display.device.clone()),
                side: display.side,
            })
            .collect(),
        eboard: board.eboard.clone().map(String::from),
        white_button: board.white_button,
        start_on_black_press: board.start_on_black_press,
        display: config.display.clone(),
        moves_from_eboard: config.engine.move_count == crate::config::MoveCountSource::Eboard,
        default_time_ms: config.daemon.default_time_ms,
        resume_after_restart: config.daemon.resume_after_restart,
        pgn_file: config.daemon.pgn_dir.is_some(),
        pgn_tags: config.pgn_tags(board),
        state_notice: state_notice.map(str::to_owned),
    }
}

/// A control's text resolved with the config's presets and defaults.
pub fn game_spec(config: &Config, text: &str) -> Result<GameSpec, String> {
    let (control, settings) = config.resolve_control(text)?;
    Ok(GameSpec {
        text: text.to_owned(),
        control,
        settings,
    })
}

/// Every configured board: its stored game rebuilt (paused, see the board
/// core's docs), or a new game of its configured control.
pub(super) fn build_boards(
    config: &Config,
    stored: &[StoredGame],
    boot_id: Option<String>,
    state_notice: Option<&str>,
    time: &super::time::TimeSource,
) -> Vec<(Board, Vec<chessclock_core::board::Action>)> {
    let run = Resumed {
        boot_id,
        now: time.monotonic_us(),
        wall: time.wall_us(),
    };
    config
        .boards
        .iter()
        .map(|board| {
            let game = stored.iter().find(|g| g.board == board.id);
            board_core(config, board, game, &run, state_notice)
        })
        .collect()
}

/// One board's core: its stored game rebuilt when there is one whose
/// control still resolves, else a new game of its configured control.
pub(super) fn board_core(
    config: &Config,
    board: &BoardConfig,
    stored: Option<&StoredGame>,
    run: &Resumed,
    state_notice: Option<&str>,
) -> (Board, Vec<chessclock_core::board::Action>) {
    if let Some(game) = stored {
        match game_spec(config, &game.control) {
            Ok(spec) => {
                let setup = board_setup(config, board, state_notice);
                return Board::restore(setup, spec, game, run);
            }
            Err(error) => tracing::error!(board = %board.id, control = %game.control, %error,
                "cannot rebuild the stored game (its control no longer resolves); starting a new game, the old one stays in the database"),
        }
    }
    new_board(config, board, run, state_notice)
}

/// A new game of `board`'s configured control (900+10 when that does not
/// resolve, which a validated config rules out).
fn new_board(
    config: &Config,
    board: &BoardConfig,
    run: &Resumed,
    state_notice: Option<&str>,
) -> (Board, Vec<chessclock_core::board::Action>) {
    let setup = board_setup(config, board, state_notice);
    let spec = game_spec(config, &board.control).unwrap_or_else(|error| {
        tracing::error!(board = %board.id, control = %board.control, %error,
            "the board's configured control is invalid; using 900+10");
        GameSpec {
            text: "900+10".into(),
            control: MatchControl::same(crate::timecontrol::TimeControl::sudden_death(
                900 * crate::engine::SECOND,
                crate::timecontrol::Bonus::Increment(10 * crate::engine::SECOND),
            )),
            settings: config.settings(),
        }
    });
    Board::new(
        setup,
        spec,
        run.boot_id.clone(),
        Caller::DAEMON,
        run.now,
        run.wall,
    )
}
