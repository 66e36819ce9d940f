//! lnetctl for lnet-rs: Lustre's `lnetctl` command lines and YAML, over the
//! /dev/lnet ioctl ABI of `include/uapi/linux/lnet/lnet-rs-ioctl.h` and the
//! module parameters in /sys/module/lnet/parameters.
//!
//! Layers: `cli` (clap, Lustre's option syntax) -> `cmd`/`transfer` (the
//! commands) -> `backend::Backend` (ioctls and parameters; `DevLnet` here,
//! an in-memory double in host tests) ; output through `show` (ordered serde
//! structures) and `yaml` (Lustre's layout and error block).

mod abi;
mod backend;
mod cli;
mod cmd;
mod route;
mod routing;
mod show;
mod transfer;
mod udsp;
mod yaml;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

use std::io::Write;

use clap::Parser;

fn main() {
    let args = cli::preprocess(std::env::args_os().collect());
    let parsed = cli::Cli::parse_from(args);
    let mut be = backend::DevLnet::new();
    let out = cmd::run(&parsed.command, &mut be);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    std::process::exit(out.exit_code());
}
