//! `chessclockctl`: the arbiter's command line (see `chessclockd::ctl`).

fn main() -> std::process::ExitCode {
    chessclockd::ctl::main()
}
