fn main() {
    eprintln!("not yet implemented");
    std::process::exit(1);
}
