//! The commands: each turns its arguments into ioctls and parameter writes
//! through a `Backend`, and its results into Lustre's YAML (stdout) or
//! Lustre's error block (stderr).

use lnet_core::nid::{lnd, Net, Nid};
use nix::errno::Errno;

use crate::abi::{self, IocArg};
use crate::backend::{Backend, ParamError, Request};
use crate::cli::{self, Command, HealthArgs};
use crate::show;
use crate::transfer;
use crate::yaml::{self, YamlError};

/// `LUSTRE_CFG_RC_BAD_PARAM`.
pub const RC_BAD_PARAM: i32 = -1;
/// `LUSTRE_CFG_RC_MISSING_PARAM`.
pub const RC_MISSING_PARAM: i32 = -2;
/// `LUSTRE_CFG_RC_GENERIC_ERR`.
pub const RC_GENERIC_ERR: i32 = -5;
/// `LUSTRE_CFG_RC_NO_MATCH`.
pub const RC_NO_MATCH: i32 = -6;

/// What a command printed and returned.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    /// Lustre's return code: 0, a negative errno or `LUSTRE_CFG_RC_*`.
    pub rc: i32,
}

impl Outcome {
    /// The process exit status: Lustre's lnetctl returns its rc from main.
    pub fn exit_code(&self) -> i32 {
        match self.rc & 0xff {
            0 if self.rc != 0 => 1,
            c => c,
        }
    }
}

/// A command in progress: its output and errors so far.
pub struct Run<'a> {
    pub be: &'a mut dyn Backend,
    pub out: String,
    pub errors: Vec<YamlError>,
    pub rc: i32,
}

impl<'a> Run<'a> {
    pub fn new(be: &'a mut dyn Backend) -> Run<'a> {
        Run {
            be,
            out: String::new(),
            errors: Vec::new(),
            rc: 0,
        }
    }

    /// Records an error (printed as an error block) and its return code.
    pub fn fail(&mut self, e: YamlError) {
        self.rc = if e.errno == 0 { RC_BAD_PARAM } else { e.errno };
        self.errors.push(e);
    }

    pub fn finish(self) -> Outcome {
        Outcome {
            stdout: self.out,
            stderr: if self.errors.is_empty() {
                String::new()
            } else {
                yaml::render_errors(&self.errors)
            },
            rc: self.rc,
        }
    }
}

pub use crate::backend::strerror;

/// `-errno`, as Lustre reports a failed ioctl.
pub fn neg(e: Errno) -> i32 {
    -(e as i32)
}

/// Runs one parsed command line.
pub fn run(cmd: &Command, be: &mut dyn Backend) -> Outcome {
    use cli::{DebugCommand, LnetCommand, NetCommand, PeerCommand, ShowOnly};
    let mut r = Run::new(be);
    match cmd {
        Command::Lnet { command } => match command {
            LnetCommand::Configure { all } => configure(&mut r, true, *all),
            LnetCommand::Unconfigure => configure(&mut r, false, false),
        },
        Command::Net { command } => match command {
            NetCommand::Add(a) => net_add(&mut r, a),
            NetCommand::Del(a) => net_del(&mut r, a),
            NetCommand::Show(a) => net_show(&mut r, a.net.as_deref(), cli::verbosity(&a.verbose)),
            NetCommand::Set(a) => set_health(&mut r, false, a),
        },
        Command::Peer { command } => match command {
            PeerCommand::Add(a) => peer_modify(
                &mut r,
                true,
                a.prim_nid.as_deref(),
                a.nid.as_deref(),
                peer_flags(a.non_mr, a.lock_prim, false),
            ),
            PeerCommand::Del(a) => peer_modify(
                &mut r,
                false,
                a.prim_nid.as_deref(),
                a.nid.as_deref(),
                peer_flags(false, false, a.force),
            ),
            PeerCommand::Show(a) => peer_show(&mut r, a.nid.as_deref(), cli::verbosity(&a.verbose)),
            PeerCommand::Set(a) => set_health(&mut r, true, a),
        },
        Command::Route { command } => match command {
            cli::RouteCommand::Add(a) => crate::route::add(&mut r, a),
            cli::RouteCommand::Del(a) => crate::route::del(&mut r, a),
            cli::RouteCommand::Show(a) => crate::route::show(&mut r, a),
        },
        Command::Routing {
            command: ShowOnly::Show,
        } => crate::routing::show(&mut r),
        Command::Set { param } => {
            if !crate::routing::set(&mut r, param) {
                let (p, v) = GlobalParam::of(param);
                set_global_text(&mut r, p, v);
            }
        }
        Command::Global {
            command: ShowOnly::Show,
        } => global_show(&mut r),
        Command::Stats {
            command: ShowOnly::Show,
        } => stats_show(&mut r),
        Command::Debug {
            command: DebugCommand::Recovery(a),
        } => {
            // The last of --local/--peer wins (clap's overrides_with).
            let which = if a.peer {
                Some(true)
            } else if a.local {
                Some(false)
            } else {
                None
            };
            debug_recovery(&mut r, which);
        }
        Command::Udsp { command } => match command {
            cli::UdspCommand::Add(a) => crate::udsp::add(&mut r, a),
            cli::UdspCommand::Del(a) => crate::udsp::del(&mut r, a),
            cli::UdspCommand::Show(a) => crate::udsp::show(&mut r, a.idx.as_deref()),
        },
        Command::Ping(a) => ping(&mut r, &a.nids, a.source.as_deref(), a.timeout.as_deref()),
        Command::Discover(a) => discover(&mut r, &a.nids, a.force),
        Command::Export(a) => transfer::export_cmd(&mut r, a.backup, a.file.as_deref()),
        Command::Import(a) => {
            let mode = if a.del {
                transfer::Mode::Del
            } else if a.show {
                transfer::Mode::Show
            } else if a.exec {
                transfer::Mode::Exec
            } else {
                transfer::Mode::Add
            };
            transfer::import_cmd(&mut r, mode, a.file.as_deref());
        }
    }
    r.finish()
}

fn peer_flags(non_mr: bool, lock_prim: bool, force: bool) -> u32 {
    let mut f = 0;
    if non_mr {
        f |= abi::PEER_NON_MR;
    }
    if lock_prim {
        f |= abi::PEER_LOCK_PRIM;
    }
    if force {
        f |= abi::PEER_FORCE;
    }
    f
}

/// `lnet configure [--all]` / `lnet unconfigure`.
pub fn configure(r: &mut Run, up: bool, all: bool) {
    let mut a = abi::LnetIocConfig::new();
    if all {
        a.cfg_flags = abi::CFG_LOAD_NETWORKS;
    }
    let res = if up {
        r.be.ioctl(Request::Configure(&mut a))
    } else {
        r.be.ioctl(Request::Unconfigure(&mut a))
    };
    if let Err(e) = res {
        let (cmd, what) = if up {
            ("configure", "configure")
        } else {
            ("unconfigure", "unconfigure")
        };
        r.fail(YamlError::new(
            cmd,
            "lnet",
            neg(e),
            format!("LNet {what} error: {}", strerror(e)),
        ));
    }
}

/// Splits a comma (or space) separated list, dropping empty items.
pub fn split_list(s: &str) -> Vec<&str> {
    s.split([',', ' ']).filter(|x| !x.is_empty()).collect()
}

/// A tunable option: Lustre ignores values it cannot parse.
fn tunable(v: &Option<String>) -> u32 {
    match v.as_deref().and_then(cli::parse_long) {
        Some(n) if n >= 0 => n as i32 as u32,
        _ => abi::TUNABLE_DEFAULT,
    }
}

/// The parsed parts of `net add` / `net del` (and of an imported net).
pub struct NetSpec {
    pub net: Net,
    pub intfs: Vec<String>,
    pub peer_timeout: u32,
    pub peer_credits: u32,
    pub peer_buffer_credits: u32,
    pub credits: u32,
    pub conns_per_peer: u32,
}

impl NetSpec {
    pub fn new(net: Net) -> NetSpec {
        NetSpec {
            net,
            intfs: Vec::new(),
            peer_timeout: abi::TUNABLE_DEFAULT,
            peer_credits: abi::TUNABLE_DEFAULT,
            peer_buffer_credits: abi::TUNABLE_DEFAULT,
            credits: abi::TUNABLE_DEFAULT,
            conns_per_peer: abi::TUNABLE_DEFAULT,
        }
    }

    /// The ioctl argument; `None` if an interface name cannot be carried.
    fn to_abi(&self) -> Option<abi::LnetIocNetCfg> {
        let mut a = abi::LnetIocNetCfg::new();
        abi::put_str(&mut a.nc_net, &self.net.to_string())?;
        if self.intfs.len() > abi::MAX_INTF {
            return None;
        }
        for (slot, name) in a.nc_intf.iter_mut().zip(&self.intfs) {
            abi::put_str(slot, name)?;
        }
        a.nc_nintf = self.intfs.len() as u32;
        a.nc_peer_timeout = self.peer_timeout;
        a.nc_peer_credits = self.peer_credits;
        a.nc_peer_buffer_credits = self.peer_buffer_credits;
        a.nc_credits = self.credits;
        a.nc_conns_per_peer = self.conns_per_peer;
        Some(a)
    }
}

/// Parses `--if eth0,eth1`: names that fit an interface name. Lustre's CPT
/// suffix (`eth0[0,1]`) is not supported by lnet-rs.
fn parse_intfs(s: &str) -> Option<Vec<String>> {
    let v: Vec<String> = split_list(s).into_iter().map(String::from).collect();
    let ok = !v.is_empty()
        && v.len() <= abi::MAX_INTF
        && v.iter()
            .all(|n| n.len() < abi::NAME_LEN && !n.contains(['[', ']']));
    ok.then_some(v)
}

fn parse_net(r: &mut Run, cmd: &str, net: Option<&str>) -> Option<Net> {
    let Some(name) = net else {
        r.fail(YamlError::new(
            cmd,
            "net",
            RC_MISSING_PARAM,
            "missing mandatory parameter: 'net'",
        ));
        return None;
    };
    match Net::parse(name) {
        Ok(n) => Some(n),
        Err(_) => {
            r.fail(YamlError::new(
                cmd,
                "net",
                RC_BAD_PARAM,
                format!("cannot parse net '{name}'"),
            ));
            None
        }
    }
}

/// Issues NET_ADD for `spec`.
pub fn net_add_spec(r: &mut Run, spec: &NetSpec) -> bool {
    let Some(mut a) = spec.to_abi() else {
        r.fail(YamlError::new(
            "ni",
            "add",
            RC_BAD_PARAM,
            "bad interface list",
        ));
        return false;
    };
    match r.be.ioctl(Request::NetAdd(&mut a)) {
        Ok(()) => true,
        Err(e) => {
            r.fail(YamlError::new(
                "add",
                "net",
                neg(e),
                format!("cannot add network: {}", strerror(e)),
            ));
            false
        }
    }
}

/// Issues NET_DEL for `net` (all of it when `intfs` is empty).
pub fn net_del_spec(r: &mut Run, net: Net, intfs: &[String]) -> bool {
    let mut spec = NetSpec::new(net);
    spec.intfs = intfs.to_vec();
    let Some(mut a) = spec.to_abi() else {
        r.fail(YamlError::new(
            "ni",
            "del",
            RC_BAD_PARAM,
            "bad interface list",
        ));
        return false;
    };
    match r.be.ioctl(Request::NetDel(&mut a)) {
        Ok(()) => true,
        Err(e) => {
            r.fail(YamlError::new(
                "del",
                "net",
                neg(e),
                format!("cannot delete network: {}", strerror(e)),
            ));
            false
        }
    }
}

/// `net add --net N [--if IF[,IF]] [tunables]`.
pub fn net_add(r: &mut Run, a: &cli::NetAddArgs) {
    let Some(net) = parse_net(r, "add", a.net.as_deref()) else {
        return;
    };
    let mut spec = NetSpec::new(net);
    if let Some(s) = &a.intf {
        match parse_intfs(s) {
            Some(v) => spec.intfs = v,
            None => {
                r.fail(YamlError::new(
                    "ni",
                    "add",
                    RC_BAD_PARAM,
                    "bad interface list",
                ));
                return;
            }
        }
    }
    spec.peer_timeout = tunable(&a.peer_timeout);
    spec.peer_credits = tunable(&a.peer_credits);
    spec.peer_buffer_credits = tunable(&a.peer_buffer_credits);
    spec.credits = tunable(&a.credits);
    spec.conns_per_peer = tunable(&a.conns_per_peer);
    net_add_spec(r, &spec);
}

/// `net del --net N [--if IF]`.
pub fn net_del(r: &mut Run, a: &cli::NetDelArgs) {
    let Some(net) = parse_net(r, "del", a.net.as_deref()) else {
        return;
    };
    let intfs = match &a.intf {
        Some(s) => match parse_intfs(s) {
            Some(v) => v,
            None => {
                r.fail(YamlError::new(
                    "ni",
                    "add",
                    RC_BAD_PARAM,
                    "bad interface list",
                ));
                return;
            }
        },
        None => Vec::new(),
    };
    net_del_spec(r, net, &intfs);
}

/// Every local NI, in the kernel's order.
pub fn collect_nis(be: &mut dyn Backend) -> Result<Vec<abi::LnetIocNi>, Errno> {
    let mut v = Vec::new();
    for idx in 0..u32::MAX {
        let mut a = abi::LnetIocNi::new();
        a.ni_idx = idx;
        match be.ioctl(Request::GetNi(&mut a)) {
            Ok(()) => v.push(a),
            Err(Errno::ENOENT) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(v)
}

/// The NIs as `net:` entries, or the error block's entry.
pub fn net_doc(
    be: &mut dyn Backend,
    filter: Option<Net>,
    detail: i64,
    backup: bool,
) -> Result<Vec<show::NetEntry>, YamlError> {
    let mut nis = collect_nis(be).map_err(|e| {
        YamlError::new(
            "show",
            "net",
            neg(e),
            format!("cannot get networks: {}", strerror(e)),
        )
    })?;
    if let Some(net) = filter {
        nis.retain(|a| a.ni_nid.to_nid().map(|n| n.net() == net).unwrap_or(false));
    }
    Ok(show::net_entries(&nis, detail, backup))
}

/// `net show [--net N] [-v [N]]`.
pub fn net_show(r: &mut Run, net: Option<&str>, detail: i64) {
    let filter = match net {
        Some(name) => match Net::parse(name) {
            Ok(n) => Some(n),
            Err(_) => {
                r.fail(YamlError::new(
                    "show",
                    "net",
                    RC_BAD_PARAM,
                    format!("cannot parse net '{name}'"),
                ));
                return;
            }
        },
        None => None,
    };
    match net_doc(r.be, filter, detail, false) {
        // Nothing to show prints nothing, as Lustre's lnetctl does.
        Ok(v) if v.is_empty() => {}
        Ok(v) => r
            .out
            .push_str(&yaml::render_netlink(&show::NetShow { net: v })),
        Err(e) => r.fail(e),
    }
}

/// `net set` / `peer set --health V --nid N|--all`.
pub fn set_health(r: &mut Run, peer: bool, a: &HealthArgs) {
    // Lustre treats a missing or unparsable value (and -1) as "not given",
    // and then has nothing to do.
    let value = match a.health.as_deref().and_then(cli::parse_long) {
        Some(v) if v != -1 => v as i32,
        _ => return,
    };
    let fail = |r: &mut Run, errno: i32, descr: String| {
        r.fail(YamlError::new("net", "set", errno, descr));
    };
    let mut h = abi::LnetIocHealth::new();
    h.hv_value = value as u32;
    match (&a.nid, a.all) {
        (Some(_), true) => {
            return fail(
                r,
                neg(Errno::EINVAL),
                String::from("cannot use --nid with --all"),
            );
        }
        (None, false) => {
            return fail(
                r,
                neg(Errno::EINVAL),
                String::from("specify --nid or --all"),
            );
        }
        (None, true) => {
            h.hv_flags = abi::HEALTH_ALL;
            h.hv_nid = abi::LnetIocNid::any();
        }
        (Some(s), false) => match Nid::parse(s) {
            Ok(n) => h.hv_nid = abi::LnetIocNid::from_nid(&n),
            Err(_) => {
                return fail(r, neg(Errno::EINVAL), format!("cannot parse NID '{s}'"));
            }
        },
    }
    let res = if peer {
        r.be.ioctl(Request::SetPeerNiHealth(&mut h))
    } else {
        r.be.ioctl(Request::SetNiHealth(&mut h))
    };
    if let Err(e) = res {
        let what = if peer { "peer ni" } else { "ni" };
        fail(
            r,
            neg(e),
            format!("cannot set {what} health value: {}", strerror(e)),
        );
    }
}

/// Parses a NID list (`a@tcp,b@tcp`).
fn parse_nids(s: &str) -> Result<Vec<Nid>, String> {
    split_list(s)
        .into_iter()
        .map(|t| Nid::parse(t).map_err(|_| format!("Unable to parse nidlist from: {s}")))
        .collect()
}

/// Adds or deletes a peer and its NIDs, `PEER_MAX_NIDS` per call.
pub fn peer_modify_nids(r: &mut Run, add: bool, prim: Nid, nids: &[Nid], flags: u32) -> bool {
    let mut chunks: Vec<&[Nid]> = nids.chunks(abi::PEER_MAX_NIDS).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    for chunk in chunks {
        let mut a = abi::LnetIocPeerCfg::new();
        a.pc_prim_nid = abi::LnetIocNid::from_nid(&prim);
        a.pc_flags = flags;
        a.pc_nnids = chunk.len() as u32;
        for (slot, n) in a.pc_nids.iter_mut().zip(chunk) {
            *slot = abi::LnetIocNid::from_nid(n);
        }
        let res = if add {
            r.be.ioctl(Request::PeerAdd(&mut a))
        } else {
            r.be.ioctl(Request::PeerDel(&mut a))
        };
        if let Err(e) = res {
            let op = if add { "add" } else { "del" };
            r.fail(YamlError::new(
                "peer",
                op,
                neg(e),
                format!("{op} peer ni operation failed: {}", strerror(e)),
            ));
            return false;
        }
    }
    true
}

/// `peer add --prim_nid P [--nid N[,N]]` / `peer del --prim_nid P [--nid ..]`.
pub fn peer_modify(r: &mut Run, add: bool, prim: Option<&str>, nids: Option<&str>, flags: u32) {
    let op = if add { "add" } else { "del" };
    let Some(prim) = prim else {
        r.fail(YamlError::new(
            "peer",
            op,
            RC_BAD_PARAM,
            "--prim_nid must be specified",
        ));
        return;
    };
    let Ok(pnid) = Nid::parse(prim) else {
        r.fail(YamlError::new(
            "peer",
            op,
            RC_BAD_PARAM,
            format!("badly formatted primary NID: {prim}"),
        ));
        return;
    };
    let list = match nids.map(parse_nids).transpose() {
        Ok(l) => l.unwrap_or_default(),
        Err(descr) => {
            r.fail(YamlError::new("peer", op, RC_BAD_PARAM, descr));
            return;
        }
    };
    peer_modify_nids(r, add, pnid, &list, flags);
}

/// A peer and its NIs.
pub struct PeerData {
    pub peer: abi::LnetIocPeer,
    pub nis: Vec<abi::LnetIocPeerNi>,
}

/// Every peer with its NIs.
pub fn collect_peers(be: &mut dyn Backend) -> Result<Vec<PeerData>, Errno> {
    let mut out = Vec::new();
    for idx in 0..u32::MAX {
        let mut p = abi::LnetIocPeer::new();
        p.pr_idx = idx;
        match be.ioctl(Request::GetPeer(&mut p)) {
            Ok(()) => {}
            Err(Errno::ENOENT) => break,
            Err(e) => return Err(e),
        }
        let mut nis = Vec::new();
        for ni in 0..u32::MAX {
            let mut a = abi::LnetIocPeerNi::new();
            a.pn_prim_nid = p.pr_prim_nid;
            a.pn_idx = ni;
            match be.ioctl(Request::GetPeerNi(&mut a)) {
                Ok(()) => nis.push(a),
                // The peer may have gone since GET_PEER.
                Err(Errno::ENOENT) => break,
                Err(e) => return Err(e),
            }
        }
        out.push(PeerData { peer: p, nis });
    }
    Ok(out)
}

/// The peers as `peer:` entries (those with `nid` among their NIDs if
/// given), or the error block's entry.
pub fn peer_doc(
    be: &mut dyn Backend,
    nid: Option<Nid>,
    detail: i64,
    backup: bool,
) -> Result<Vec<show::PeerEntry>, YamlError> {
    let peers = collect_peers(be).map_err(|e| {
        YamlError::new(
            "show",
            "peer",
            neg(e),
            format!("cannot get peer information: {}", strerror(e)),
        )
    })?;
    Ok(peers
        .iter()
        .filter(|p| match nid {
            None => true,
            Some(n) => {
                p.peer.pr_prim_nid.to_nid() == Ok(n)
                    || p.nis.iter().any(|ni| ni.pn_nid.to_nid() == Ok(n))
            }
        })
        .map(|p| show::peer_entry(&p.peer, &p.nis, detail, backup))
        .collect())
}

/// `peer show [--nid N] [-v [N]]`.
pub fn peer_show(r: &mut Run, nid: Option<&str>, detail: i64) {
    let enoent = || {
        YamlError::new(
            "show",
            "peer",
            neg(Errno::ENOENT),
            format!("cannot get peer information: {}", strerror(Errno::ENOENT)),
        )
    };
    let filter = match nid {
        Some(s) => match Nid::parse(s) {
            Ok(n) => Some(n),
            // Lustre looks the unparsable NID up and finds nothing.
            Err(_) => return r.fail(enoent()),
        },
        None => None,
    };
    match peer_doc(r.be, filter, detail, false) {
        Ok(v) if v.is_empty() && filter.is_some() => r.fail(enoent()),
        Ok(v) if v.is_empty() => {}
        Ok(v) => r
            .out
            .push_str(&yaml::render_netlink(&show::PeerShow { peer: v })),
        Err(e) => r.fail(e),
    }
}

/// The global parameters `set` writes and `global show` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalParam {
    NumaRange,
    MaxInterfaces,
    Discovery,
    DropAsymRoute,
    RetryCount,
    TransactionTimeout,
    HealthSensitivity,
    RecoveryInterval,
    RouterSensitivity,
    LndTimeout,
    ResponseTracking,
    RecoveryLimit,
    MaxRecoveryPingInterval,
}

impl GlobalParam {
    /// In `global show` order.
    pub const ALL: [GlobalParam; 13] = [
        GlobalParam::NumaRange,
        GlobalParam::MaxInterfaces,
        GlobalParam::Discovery,
        GlobalParam::DropAsymRoute,
        GlobalParam::RetryCount,
        GlobalParam::TransactionTimeout,
        GlobalParam::HealthSensitivity,
        GlobalParam::RecoveryInterval,
        GlobalParam::RouterSensitivity,
        GlobalParam::LndTimeout,
        GlobalParam::ResponseTracking,
        GlobalParam::RecoveryLimit,
        GlobalParam::MaxRecoveryPingInterval,
    ];

    /// The parameter and value of a `set` sub-command.
    pub fn of(c: &cli::SetCommand) -> (GlobalParam, &str) {
        use cli::SetCommand as S;
        match c {
            S::HealthSensitivity(v) => (GlobalParam::HealthSensitivity, &v.value),
            S::RetryCount(v) => (GlobalParam::RetryCount, &v.value),
            S::TransactionTimeout(v) => (GlobalParam::TransactionTimeout, &v.value),
            S::RecoveryInterval(v) => (GlobalParam::RecoveryInterval, &v.value),
            S::RecoveryLimit(v) => (GlobalParam::RecoveryLimit, &v.value),
            S::MaxRecoveryPingInterval(v) => (GlobalParam::MaxRecoveryPingInterval, &v.value),
            S::ResponseTracking(v) => (GlobalParam::ResponseTracking, &v.value),
            S::Discovery(v) => (GlobalParam::Discovery, &v.value),
            S::DropAsymRoute(v) => (GlobalParam::DropAsymRoute, &v.value),
            S::NumaRange(v) => (GlobalParam::NumaRange, &v.value),
            S::MaxInterfaces(v) => (GlobalParam::MaxInterfaces, &v.value),
            S::RouterSensitivity(v) => (GlobalParam::RouterSensitivity, &v.value),
            // routing.rs takes these before they get here.
            S::TinyBuffers(v) | S::SmallBuffers(v) | S::LargeBuffers(v) | S::Routing(v) => {
                (GlobalParam::RouterSensitivity, &v.value)
            }
        }
    }

    /// The YAML key (and `set` sub-command).
    pub const fn key(self) -> &'static str {
        match self {
            GlobalParam::NumaRange => "numa_range",
            GlobalParam::MaxInterfaces => "max_interfaces",
            GlobalParam::Discovery => "discovery",
            GlobalParam::DropAsymRoute => "drop_asym_route",
            GlobalParam::RetryCount => "retry_count",
            GlobalParam::TransactionTimeout => "transaction_timeout",
            GlobalParam::HealthSensitivity => "health_sensitivity",
            GlobalParam::RecoveryInterval => "recovery_interval",
            GlobalParam::RouterSensitivity => "router_sensitivity",
            GlobalParam::LndTimeout => "lnd_timeout",
            GlobalParam::ResponseTracking => "response_tracking",
            GlobalParam::RecoveryLimit => "recovery_limit",
            GlobalParam::MaxRecoveryPingInterval => "max_recovery_ping_interval",
        }
    }

    /// A key of an imported file (`max_intf` is the legacy name).
    pub fn from_key(k: &str) -> Option<GlobalParam> {
        if k == "max_intf" {
            return Some(GlobalParam::MaxInterfaces);
        }
        GlobalParam::ALL.into_iter().find(|p| p.key() == k)
    }

    /// The module parameter (health.md §11.6), if it is one.
    pub const fn sysfs(self) -> Option<&'static str> {
        match self {
            GlobalParam::NumaRange | GlobalParam::LndTimeout => None,
            GlobalParam::MaxInterfaces => Some("lnet_interfaces_max"),
            GlobalParam::Discovery => Some("lnet_peer_discovery_disabled"),
            GlobalParam::DropAsymRoute => Some("lnet_drop_asym_route"),
            GlobalParam::RetryCount => Some("lnet_retry_count"),
            GlobalParam::TransactionTimeout => Some("lnet_transaction_timeout"),
            GlobalParam::HealthSensitivity => Some("lnet_health_sensitivity"),
            GlobalParam::RecoveryInterval => Some("lnet_recovery_interval"),
            GlobalParam::RouterSensitivity => Some("router_sensitivity_percentage"),
            GlobalParam::ResponseTracking => Some("lnet_response_tracking"),
            GlobalParam::RecoveryLimit => Some("lnet_recovery_limit"),
            GlobalParam::MaxRecoveryPingInterval => Some("lnet_max_recovery_ping_interval"),
        }
    }

    /// How Lustre's error messages name it.
    const fn human(self) -> &'static str {
        match self {
            GlobalParam::NumaRange => "numa_range",
            GlobalParam::MaxInterfaces => "max interfaces",
            GlobalParam::Discovery => "discovery",
            GlobalParam::DropAsymRoute => "drop asym route",
            GlobalParam::RetryCount => "retry count",
            GlobalParam::TransactionTimeout => "transaction timeout",
            GlobalParam::HealthSensitivity => "health sensitivity",
            GlobalParam::RecoveryInterval => "recovery interval",
            GlobalParam::RouterSensitivity => "router health sensitivity",
            GlobalParam::LndTimeout => "LND timeout",
            GlobalParam::ResponseTracking => "response tracking",
            GlobalParam::RecoveryLimit => "recovery limit",
            GlobalParam::MaxRecoveryPingInterval => "maximum recovery ping interval",
        }
    }

    /// Lustre's message for a `set` value that does not parse.
    const fn parse_error(self) -> &'static str {
        match self {
            GlobalParam::NumaRange => "cannot parse numa_range value",
            GlobalParam::MaxInterfaces => "cannot parse max_interfaces value",
            GlobalParam::Discovery => "cannot parse discovery value",
            GlobalParam::DropAsymRoute => "cannot parse drop_asym_route value",
            GlobalParam::RetryCount => "cannot parse retry_count value",
            GlobalParam::TransactionTimeout => "cannot parse transaction timeout value",
            GlobalParam::HealthSensitivity => "cannot parse health sensitivity value",
            GlobalParam::RecoveryInterval => "cannot parse recovery interval value",
            GlobalParam::RouterSensitivity => "cannot parse router sensitivity value",
            GlobalParam::LndTimeout => "cannot parse lnd_timeout value",
            GlobalParam::ResponseTracking => "cannot parse response_tracking value",
            GlobalParam::RecoveryLimit => "cannot parse recovery_limit value",
            GlobalParam::MaxRecoveryPingInterval => "cannot parse maximum recovery interval value",
        }
    }
}

/// lnet-rs has no router: when `router_sensitivity_percentage` does not
/// exist, router sensitivity is taken to be fixed at Lustre's default (the
/// parameter is deprecated and unused there too, health.md §11.2).
pub const ROUTER_SENSITIVITY_DEFAULT: i64 = 100;

/// `set <param> <value>` from the command line.
pub fn set_global_text(r: &mut Run, p: GlobalParam, text: &str) {
    match cli::parse_long(text) {
        Some(v) => {
            set_global(r, p, v);
        }
        None => r.fail(YamlError::new(
            "parser",
            "set",
            RC_BAD_PARAM,
            p.parse_error(),
        )),
    }
}

/// Sets a global parameter as Lustre's `lustre_lnet_config_*` do: the value
/// as a C int, three client-side checks, then the module parameter (or the
/// ioctl for numa_range).
pub fn set_global(r: &mut Run, p: GlobalParam, value: i64) -> bool {
    let v = value as i32;
    let key = p.key();
    let reject = |r: &mut Run, descr: &str| {
        r.fail(YamlError::new("add", key, RC_BAD_PARAM, descr));
        false
    };
    let text = match p {
        GlobalParam::ResponseTracking if !(0..=3).contains(&v) => {
            return reject(r, "Valid values are: 0, 1, 2, or 3");
        }
        GlobalParam::RecoveryLimit if v < 0 => {
            return reject(r, "Must be greater than or equal to 0");
        }
        GlobalParam::MaxRecoveryPingInterval if v <= 0 => {
            return reject(r, "Must be greater than 0");
        }
        GlobalParam::LndTimeout => {
            // Derived by the kernel; import ignores it, as Lustre does.
            return true;
        }
        GlobalParam::NumaRange => {
            let mut a = abi::LnetIocValue::new();
            a.val_value = v as u32;
            return match r.be.ioctl(Request::SetNumaRange(&mut a)) {
                Ok(()) => true,
                Err(e) => {
                    r.fail(YamlError::new(
                        "add",
                        key,
                        neg(e),
                        format!("cannot configure numa_range to {v}: {}", strerror(e)),
                    ));
                    false
                }
            };
        }
        // Written inverted, as lnet_peer_discovery_disabled.
        GlobalParam::Discovery => String::from(if v != 0 { "0" } else { "1" }),
        GlobalParam::DropAsymRoute => String::from(if v != 0 { "1" } else { "0" }),
        _ => v.to_string(),
    };
    let Some(name) = p.sysfs() else {
        return true;
    };
    match r.be.write_param(name, &text) {
        Ok(()) => true,
        Err(ParamError::Open(Errno::ENOENT))
            if p == GlobalParam::RouterSensitivity
                && i64::from(v) == ROUTER_SENSITIVITY_DEFAULT =>
        {
            true
        }
        Err(e) => {
            let rc = match e {
                ParamError::Open(_) => RC_NO_MATCH,
                ParamError::Io(_) => RC_GENERIC_ERR,
            };
            r.fail(YamlError::new(
                "add",
                key,
                rc,
                format!("cannot configure {}: {}", p.human(), strerror(e.errno())),
            ));
            false
        }
    }
}

/// Reads one global value (lnetctl.md §3.1), or the error block's entry.
pub fn read_global(
    be: &mut dyn Backend,
    p: GlobalParam,
    ioc: &mut Option<abi::LnetIocGlobals>,
) -> Result<i64, YamlError> {
    if let Some(name) = p.sysfs() {
        return match be.read_param(name) {
            Ok(s) => {
                let v = cli::atol(&s);
                Ok(if p == GlobalParam::Discovery {
                    i64::from(v == 0)
                } else {
                    i64::from(v as i32)
                })
            }
            Err(ParamError::Open(Errno::ENOENT)) if p == GlobalParam::RouterSensitivity => {
                Ok(ROUTER_SENSITIVITY_DEFAULT)
            }
            Err(e) => {
                let rc = match e {
                    ParamError::Open(_) => RC_NO_MATCH,
                    ParamError::Io(_) => RC_GENERIC_ERR,
                };
                Err(YamlError::new(
                    "show",
                    "global",
                    neg(e.errno()),
                    format!("cannot get {}: {rc}", p.human()),
                ))
            }
        };
    }
    if ioc.is_none() {
        let mut a = abi::LnetIocGlobals::new();
        be.ioctl(Request::GetGlobals(&mut a)).map_err(|e| {
            YamlError::new(
                "show",
                "global",
                neg(e),
                format!("cannot get {}: {}", p.key(), strerror(e)),
            )
        })?;
        *ioc = Some(a);
    }
    let a = ioc.as_ref().map(|a| (a.gl_numa_range, a.gl_lnd_timeout));
    let (numa, lnd_to) = a.unwrap_or_default();
    Ok(i64::from(if p == GlobalParam::NumaRange {
        numa
    } else {
        lnd_to
    }))
}

/// All global values in `global show` order.
pub fn read_globals(be: &mut dyn Backend) -> Result<show::Globals, YamlError> {
    let mut ioc = None;
    let mut g = show::Globals::default();
    for p in GlobalParam::ALL {
        let v = read_global(be, p, &mut ioc)?;
        let slot = match p {
            GlobalParam::NumaRange => &mut g.numa_range,
            GlobalParam::MaxInterfaces => &mut g.max_interfaces,
            GlobalParam::Discovery => &mut g.discovery,
            GlobalParam::DropAsymRoute => &mut g.drop_asym_route,
            GlobalParam::RetryCount => &mut g.retry_count,
            GlobalParam::TransactionTimeout => &mut g.transaction_timeout,
            GlobalParam::HealthSensitivity => &mut g.health_sensitivity,
            GlobalParam::RecoveryInterval => &mut g.recovery_interval,
            GlobalParam::RouterSensitivity => &mut g.router_sensitivity,
            GlobalParam::LndTimeout => &mut g.lnd_timeout,
            GlobalParam::ResponseTracking => &mut g.response_tracking,
            GlobalParam::RecoveryLimit => &mut g.recovery_limit,
            GlobalParam::MaxRecoveryPingInterval => &mut g.max_recovery_ping_interval,
        };
        *slot = v;
    }
    Ok(g)
}

/// `global show`: all or nothing, as Lustre stops at the first failure.
pub fn global_show(r: &mut Run) {
    match read_globals(r.be) {
        Ok(g) => r
            .out
            .push_str(&yaml::render(&show::GlobalShow { global: g })),
        Err(e) => r.fail(e),
    }
}

/// `stats show`.
pub fn stats_show(r: &mut Run) {
    let mut a = abi::LnetIocStats::new();
    match r.be.ioctl(Request::GetStats(&mut a)) {
        Ok(()) => r.out.push_str(&yaml::render(&show::StatsShow {
            statistics: show::Counters::new(&a),
        })),
        Err(e) => r.fail(YamlError::new(
            "show",
            "statistics",
            neg(e),
            format!("cannot get lnet statistics: {}", strerror(e)),
        )),
    }
}

/// A recovery queue, page by page.
pub fn collect_recovery(be: &mut dyn Backend, peer: bool) -> Result<Vec<Nid>, Errno> {
    let mut nids = Vec::new();
    loop {
        let mut a = abi::LnetIocRecovery::new();
        a.rq_type = if peer {
            abi::RECOVERY_PEER
        } else {
            abi::RECOVERY_LOCAL
        };
        a.rq_start = nids.len() as u32;
        be.ioctl(Request::GetRecoveryQueue(&mut a))?;
        let n = (a.rq_count as usize).min(abi::RECOVERY_PAGE);
        for x in &a.rq_nids[..n] {
            nids.push(x.to_nid().map_err(|_| Errno::EPROTO)?);
        }
        if n == 0 || nids.len() >= a.rq_total as usize {
            return Ok(nids);
        }
    }
}

/// `debug recovery --local | --peer`. With neither, Lustre's lnetctl
/// returns -EINVAL and prints nothing.
pub fn debug_recovery(r: &mut Run, which: Option<bool>) {
    let Some(peer) = which else {
        r.rc = neg(Errno::EINVAL);
        return;
    };
    match collect_recovery(r.be, peer) {
        Ok(v) if v.is_empty() => {}
        Ok(v) => r
            .out
            .push_str(&yaml::render_value(&show::recovery_doc(peer, &v))),
        Err(e) => {
            let title = if peer {
                "Peer NI recovery"
            } else {
                "Local NI recovery"
            };
            r.fail(YamlError::new(
                "show",
                title,
                neg(e),
                format!("failed to print recovery queue: {}", strerror(e)),
            ));
        }
    }
}

/// Issues a paged `lnet_ioc_ping` request (PING or DISCOVER) for
/// `target` from page 0 on, `fill` setting the other inputs of each call
/// (it is told whether this is the first); the peer as the pages list it,
/// without `0@lo`.
fn ping_pages(
    be: &mut dyn Backend,
    target: Nid,
    discover: bool,
    fill: impl Fn(&mut abi::LnetIocPing, bool),
) -> Result<show::PingEntry, Errno> {
    let mut entries: Vec<Nid> = Vec::new();
    let mut first = None;
    loop {
        let mut a = abi::LnetIocPing::new();
        a.pg_target = abi::LnetIocNid::from_nid(&target);
        a.pg_start = entries.len() as u32;
        fill(&mut a, first.is_none());
        if discover {
            be.ioctl(Request::Discover(&mut a))?;
        } else {
            be.ioctl(Request::Ping(&mut a))?;
        }
        let n = (a.pg_count as usize).min(abi::PING_PAGE);
        for e in &a.pg_entries[..n] {
            entries.push(e.pe_nid.to_nid().map_err(|_| Errno::EPROTO)?);
        }
        let total = a.pg_total as usize;
        if first.is_none() {
            first = Some(a);
        }
        if n == 0 || entries.len() >= total {
            break;
        }
    }
    let a = first.ok_or(Errno::EPROTO)?;
    Ok(show::PingEntry {
        primary_nid: a.pg_primary.text(),
        multi_rail: a.pg_multi_rail != 0,
        peer_ni: entries
            .iter()
            .filter(|n| n.net().lnd() != lnd::LO)
            .map(|n| show::PingNi { nid: n.to_string() })
            .collect(),
    })
}

/// Pings `target`, page by page: the primary NID, Multi-Rail, and the
/// reply's NIDs.
pub fn ping_one(
    be: &mut dyn Backend,
    target: Nid,
    source: Option<Nid>,
    timeout_ms: u32,
) -> Result<show::PingEntry, Errno> {
    ping_pages(be, target, false, |a, _| {
        a.pg_source = abi::LnetIocNid::from_nid(&source.unwrap_or(Nid::ANY));
        a.pg_timeout_ms = timeout_ms;
    })
}

/// Discovers `target`'s peer and lists it, page by page.
pub fn discover_one(
    be: &mut dyn Backend,
    target: Nid,
    force: bool,
) -> Result<show::PingEntry, Errno> {
    ping_pages(be, target, true, |a, first| {
        a.pg_source = abi::LnetIocNid::from_nid(&Nid::ANY);
        // Lustre's lnetctl passes a fixed 1000 ms (lnetctl.md §1).
        a.pg_timeout_ms = 1000;
        a.pg_multi_rail = u32::from(force && first);
    })
}

/// `discover [--force] NID[,NID..] [NID..]`: each peer as discovery left
/// it, each failure as a `manage: - discover:` error.
pub fn discover(r: &mut Run, targets: &[String], force: bool) {
    let texts: Vec<&str> = targets.iter().flat_map(|t| split_list(t)).collect();
    let mut found = Vec::new();
    for t in texts {
        let result = Nid::parse(t)
            .map_err(|_| (Errno::EINVAL, format!("{t}: cannot parse NID")))
            .and_then(|n| {
                discover_one(r.be, n, force).map_err(|e| (e, format!("{t}: {}", strerror(e))))
            });
        match result {
            Ok(e) => found.push(e),
            Err((e, descr)) => r.fail(YamlError::new("manage", "discover", neg(e), descr)),
        }
    }
    if !found.is_empty() {
        r.out.push_str(&yaml::render_libyaml(
            &show::DiscoverShow { discover: found },
            2,
        ));
    }
}

/// `ping NID[,NID..] [NID..] [--source S] [--timeout T]`: each target's
/// reply on stdout, each failure as a `manage: - ping:` error.
pub fn ping(r: &mut Run, targets: &[String], source: Option<&str>, timeout: Option<&str>) {
    // --timeout is in seconds (atol, times 1000); the default is 1000 ms.
    let timeout_ms = match timeout {
        Some(t) => cli::atol(t)
            .saturating_mul(1000)
            .clamp(0, i64::from(u32::MAX)) as u32,
        None => 1000,
    };
    let src = match source {
        Some(s) => match Nid::parse(s) {
            Ok(n) => Some(n),
            Err(_) => {
                r.fail(YamlError::new(
                    "manage",
                    "ping",
                    neg(Errno::EINVAL),
                    format!("{s}: cannot parse source NID"),
                ));
                return;
            }
        },
        None => None,
    };
    let texts: Vec<&str> = targets.iter().flat_map(|t| split_list(t)).collect();
    let mut replies = Vec::new();
    for t in texts {
        let target = match Nid::parse(t) {
            Ok(n) => n,
            Err(_) => {
                r.fail(YamlError::new(
                    "manage",
                    "ping",
                    neg(Errno::EINVAL),
                    format!("{t}: cannot parse NID"),
                ));
                continue;
            }
        };
        match ping_one(r.be, target, src, timeout_ms) {
            Ok(e) => replies.push(e),
            Err(e) => r.fail(YamlError::new(
                "manage",
                "ping",
                neg(e),
                format!("{t}: {}", strerror(e)),
            )),
        }
    }
    if !replies.is_empty() {
        r.out
            .push_str(&yaml::render_libyaml(&show::PingShow { ping: replies }, 2));
    }
}
