//! Writes the man pages and bash completions of the tools a node installs
//! (scripts/build-deb.sh packs them):
//!
//!   gen_docs OUTDIR
//!
//! OUTDIR/man8/lnetctl.8 and one page per subcommand (lnetctl-net.8, ...),
//! OUTDIR/man8/lnet-rs-lctl.8, and OUTDIR/bash-completion/{lnetctl,
//! lnet-rs-lctl}. lnetctl's come from its clap definition (cli.rs, the
//! same source as the tool); lnet-rs-lctl parses its options by hand, as
//! Lustre's lctl does, so its page carries its usage text and its
//! completion offers its commands.

#[allow(dead_code)]
#[path = "../cli.rs"]
mod cli;

use std::fs;
use std::io;
use std::path::Path;

use clap::{Command, CommandFactory};
use clap_complete::{generate, Shell};

const LCTL_USAGE: &str = include_str!("lctl_usage.txt");
const LCTL_ABOUT: &str =
    "LNet fault injection for lnet-rs (Lustre's lctl net_drop_* and net_delay_* commands)";
const LCTL_LONG_ABOUT: &str = "The LNet fault injection commands of Lustre's lctl, with \
    Lustre's options and messages, for lnet-rs. It does nothing else, so it is not installed \
    as lctl: Lustre's own lctl keeps that name.";

/// The page of `cmd` and of each of its subcommands, named as man(1)
/// finds them: lnetctl-net.8, lnetctl-net-add.8...
fn man_pages(cmd: &Command, name: &str, dir: &Path) -> io::Result<()> {
    // clap takes names as &'static str (without its "string" feature):
    // a few bytes kept for the life of this short program.
    let cmd = cmd
        .clone()
        .name(name.to_string().leak() as &str)
        .bin_name(name.replace('-', " "));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .section("8")
        .render(&mut page)?;
    fs::write(dir.join(format!("{name}.8")), page)?;
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        man_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}

/// lnet-rs-lctl as clap sees it: its commands (the usage text's lines
/// that start with a tab and a name), each with the usage as its help.
fn lctl_command() -> Command {
    let mut cmd = Command::new("lnet-rs-lctl")
        .about(LCTL_ABOUT)
        .long_about(LCTL_LONG_ABOUT)
        .disable_help_flag(true)
        .disable_help_subcommand(true);
    for line in LCTL_USAGE.lines() {
        let Some(rest) = line.strip_prefix('\t') else {
            continue;
        };
        if rest.starts_with('\t') {
            continue;
        }
        let name = rest.split_whitespace().next().unwrap_or_default();
        if name.starts_with("net_") {
            cmd = cmd.subcommand(
                Command::new(name)
                    .about(rest.trim())
                    .disable_help_flag(true),
            );
        }
    }
    cmd
}

/// lnet-rs-lctl's page: its name and description, then its usage text as
/// it prints it (preformatted), in place of clap's list of subcommands.
fn lctl_page() -> io::Result<Vec<u8>> {
    let cmd = Command::new("lnet-rs-lctl")
        .about(LCTL_ABOUT)
        .long_about(LCTL_LONG_ABOUT);
    let man = clap_mangen::Man::new(cmd).section("8");
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_description_section(&mut page)?;
    page.extend_from_slice(b".SH USAGE\n.nf\n");
    for line in LCTL_USAGE.lines() {
        // No line of it starts with a control character; escape any
        // backslash all the same.
        page.extend_from_slice(line.replace('\\', "\\e").as_bytes());
        page.push(b'\n');
    }
    page.extend_from_slice(b".fi\n");
    Ok(page)
}

fn main() -> io::Result<()> {
    let Some(out) = std::env::args_os().nth(1) else {
        eprintln!("usage: gen_docs OUTDIR");
        std::process::exit(2);
    };
    let out = Path::new(&out);
    let man = out.join("man8");
    let comp = out.join("bash-completion");
    fs::create_dir_all(&man)?;
    fs::create_dir_all(&comp)?;

    let lnetctl = cli::Cli::command();
    man_pages(&lnetctl, "lnetctl", &man)?;
    fs::write(man.join("lnet-rs-lctl.8"), lctl_page()?)?;

    for (mut cmd, name) in [(lnetctl, "lnetctl"), (lctl_command(), "lnet-rs-lctl")] {
        let mut f = fs::File::create(comp.join(name))?;
        generate(Shell::Bash, &mut cmd, name, &mut f);
    }
    Ok(())
}
