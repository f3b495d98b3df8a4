fn main() {
    eprintln!("bwsim: the command line is being assembled");
    std::process::exit(2);
}
