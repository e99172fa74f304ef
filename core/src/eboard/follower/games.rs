//! The follower's games and tags, and its restore after a restart: what
//! the arbiter, the hall and the store set (a result, a new game, tags) and
//! how a restored game is brought back before the board is followed again.

use super::*;
use crate::limits;

impl Follower {
    // ---- games and tags ----

    /// The arbiter set up a new game (`tags` from the configuration,
    /// `control` the new control). When the board's next game already
    /// began (after a finished one), it becomes this game: its moves are
    /// returned (to journal them with the new game). Otherwise the shell is
    /// told to follow the next game from the starting position.
    pub fn new_game(
        &mut self,
        tags: BTreeMap<String, String>,
        control: &MatchControl,
    ) -> Vec<DetectedMove> {
        let promoted = self.next.take();
        self.game = Game::new(tags, control);
        self.open.clear();
        self.final_clock = None;
        let mut journal = Vec::new();
        match promoted {
            Some(moves) => {
                self.game.on_board = true;
                self.in_step = true;
                journal = moves.iter().map(FollowedMove::detected).collect();
                self.game.moves = moves;
            }
            None if self.board_attached => {
                self.awaiting_reset = true;
                self.act(FollowerAction::Command(EboardCommand::NewGame));
            }
            None => {}
        }
        self.changed();
        journal
    }

    /// Sets tags of the current game (`Event`, `Site`, `Date`, `Round`,
    /// `White`, `Black`, or any other valid PGN tag name except those the
    /// follower writes, [`RESERVED_TAGS`]); an empty value gives the tag
    /// back to its configured default. Nothing changes when one is refused,
    /// or when the game would carry more than [`limits::MAX_TAGS`] tags
    /// (the configured ones and the set ones together; see
    /// [`check_tags`] for one request).
    pub fn set_tags(&mut self, tags: &[(String, String)]) -> Result<(), String> {
        check_tags(tags)?;
        let mut overrides = self.game.overrides.clone();
        for (name, value) in tags {
            if value.is_empty() {
                overrides.remove(name);
            } else {
                overrides.insert(name.clone(), value.clone());
            }
        }
        let mut merged = self.game.defaults.clone();
        merged.extend(overrides.iter().map(|(n, v)| (n.clone(), v.clone())));
        limits::check_count("tags on the game", merged.len(), limits::MAX_TAGS)?;
        self.game.overrides = overrides;
        self.game.tags = Arc::new(merged);
        self.changed();
        Ok(())
    }

    /// The current game's tags: the configured ones with those set since
    /// over them (what its PGN carries).
    pub fn tags(&self) -> &BTreeMap<String, String> {
        &self.game.tags
    }

    /// The tags set since the game began (what a journal keeps).
    pub fn tag_overrides(&self) -> &BTreeMap<String, String> {
        &self.game.overrides
    }

    // ---- restoring after a restart ----

    /// Rebuilding a stored game: until [`Follower::end_restore`] nothing is
    /// asked for (the stored inputs hold what was done) and presses are not
    /// matched (their stored counts are right).
    pub fn begin_restore(&mut self) {
        self.restoring = true;
    }

    /// A result kept in the journal.
    pub fn restore_result(
        &mut self,
        at: Micros,
        result: Option<GameResult>,
        termination: Option<Termination>,
    ) {
        match result {
            Some(result) => {
                self.game.result = Some((result, termination.unwrap_or(Termination::Normal)));
                self.game.result_at = Some(at);
            }
            None => {
                self.game.result = None;
                self.game.result_at = None;
                self.game.game_end = None;
            }
        }
    }

    /// The game is rebuilt: every move stands confirmed; returns the command
    /// that makes the shell follow the same game.
    pub fn end_restore(&mut self) -> Option<EboardCommand> {
        self.restoring = false;
        self.actions.clear();
        self.final_clock = None;
        for m in &mut self.game.moves {
            m.confirmed = true;
        }
        if !self.board_attached || !(self.game.on_board || self.finished()) {
            return None;
        }
        if self.game.moves.is_empty() && !self.finished() {
            return None;
        }
        Some(EboardCommand::Resume {
            moves: self.game.moves.iter().map(|m| m.uci.clone()).collect(),
            finished: self.finished(),
        })
    }
}
