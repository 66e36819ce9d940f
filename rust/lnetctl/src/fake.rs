//! An in-memory LNet behind the `Backend` trait, for host tests. It checks
//! every argument's header as the kernel will, keeps nets, NIs, peers and
//! the module parameters (with lnet-core's setter rules) and fault rules
//! (with lnet-core's rule checks), and answers the ioctls in the header's
//! documented way, paging included.

use lnet_core::fault::{Action, Attr, Pace, Rule};
use lnet_core::nid::{lnd, Net, Nid};
use lnet_core::nidlist::{NoMem, Seq};
use lnet_core::params::{self, Param, Tunables};
use lnet_core::route::{List, Route, RouteTable};
use nix::errno::Errno;

use crate::abi::{self, IocArg, LnetIocNid};
use crate::backend::{Backend, ParamError, Request};

#[derive(Clone, Debug)]
pub struct FakeNi {
    pub nid: Nid,
    pub intf: Option<String>,
    pub health: i32,
    /// peer_timeout, peer_credits, peer_buffer_credits, credits,
    /// conns_per_peer as configured (TUNABLE_DEFAULT: default).
    pub tun: [u32; 5],
}

#[derive(Clone, Debug)]
pub struct FakePeer {
    pub prim: Nid,
    /// All NIDs, the primary first.
    pub nids: Vec<Nid>,
    pub health: Vec<i32>,
    pub mr: bool,
    pub locked: bool,
}

#[derive(Clone, Debug)]
pub struct PingReply {
    pub target: Nid,
    pub primary: Nid,
    pub mr: bool,
    pub entries: Vec<(Nid, u32)>,
}

#[derive(Clone, Debug)]
pub struct Fake {
    pub up: bool,
    /// Host interfaces and their IPv4 addresses.
    pub host_ifs: Vec<(String, [u8; 4])>,
    /// The nets `configure --all` starts (the networks= parameter).
    pub boot_nets: Vec<(Net, Vec<String>)>,
    pub nis: Vec<FakeNi>,
    pub peers: Vec<FakePeer>,
    pub tun: Tunables,
    /// router_sensitivity_percentage, if the module had it.
    pub router_sensitivity: Option<i64>,
    pub stats: abi::LnetIocStats,
    pub recovery: [Vec<Nid>; 2],
    pub pings: Vec<PingReply>,
    /// Entries per page of recovery queues and ping replies.
    pub page: usize,
    /// Failures to inject: the next request of that command fails.
    pub fail: Vec<(abi::Cmd, Errno)>,
    /// Every command issued.
    pub log: Vec<abi::Cmd>,
    /// Pings actually sent (a page from the kept reply sends none).
    pub pings_sent: usize,
    /// The timeout and source of the last ping request.
    pub last_ping: Option<(u32, Nid)>,
    /// Fault rules by kind (`abi::FAULT_DROP`, `abi::FAULT_DELAY`), newest
    /// first as the kernel keeps them.
    pub faults: [Vec<Rule>; 2],
    /// UDSP rules in index order (kept, not applied: the kernel applies
    /// them).
    pub udsp: Vec<lnet_core::udsp::Rule>,
    /// The route table, with lnet-core's rules (gateways are their own
    /// peers here: the fake makes no peer of them).
    pub routes: RouteTable<RouteVec>,
    /// Forwarding: None until routing first starts (no pools), else
    /// whether it is on and the pools' buffer counts (tiny, small, large).
    pub routing: Option<(bool, [u32; abi::NRBPOOLS])>,
    kept: Option<PingReply>,
}

/// The fake's route storage (lnet-core's table asks for a list type).
#[derive(Clone, Debug, Default)]
pub struct RouteVec(Vec<Route>);

impl Seq<Route> for RouteVec {
    fn try_push(&mut self, v: Route) -> Result<(), NoMem> {
        self.0.push(v);
        Ok(())
    }

    fn items(&self) -> &[Route] {
        &self.0
    }

    fn items_mut(&mut self) -> &mut [Route] {
        &mut self.0
    }
}

impl List<Route> for RouteVec {
    fn pop(&mut self) -> Option<Route> {
        self.0.pop()
    }
}

fn ip_nid(net: Net, ip: [u8; 4]) -> Nid {
    Nid::new4(net, u32::from_be_bytes(ip))
}

impl Fake {
    /// An LNet that is down, with interfaces eth0, eth1 and ib0.
    pub fn new() -> Fake {
        Fake {
            up: false,
            host_ifs: vec![
                ("eth0".into(), [192, 168, 1, 10]),
                ("eth1".into(), [192, 168, 2, 10]),
                ("ib0".into(), [10, 0, 0, 10]),
            ],
            boot_nets: Vec::new(),
            nis: Vec::new(),
            peers: Vec::new(),
            tun: Tunables::DEFAULT,
            router_sensitivity: None,
            stats: abi::LnetIocStats::new(),
            recovery: [Vec::new(), Vec::new()],
            pings: Vec::new(),
            page: 2,
            fail: Vec::new(),
            log: Vec::new(),
            pings_sent: 0,
            last_ping: None,
            faults: [Vec::new(), Vec::new()],
            udsp: Vec::new(),
            routes: RouteTable::new(RouteVec::default(), lnet_core::route::rnet_hash_bits(0)),
            routing: None,
            kept: None,
        }
    }

    /// An LNet that is up with only the loopback NI.
    pub fn up() -> Fake {
        let mut f = Fake::new();
        f.start();
        f
    }

    fn start(&mut self) {
        self.up = true;
        self.nis = vec![FakeNi {
            nid: Nid::LO,
            intf: None,
            health: 1000,
            tun: [abi::TUNABLE_DEFAULT; 5],
        }];
    }

    fn find_if(&self, name: &str) -> Option<[u8; 4]> {
        self.host_ifs.iter().find(|(n, _)| n == name).map(|x| x.1)
    }

    fn add_net(&mut self, net: Net, intfs: &[String], tun: [u32; 5]) -> Result<(), Errno> {
        if net.lnd() == lnd::LO {
            return Err(Errno::EEXIST);
        }
        if net.lnd() != lnd::SOCK && net.lnd() != lnd::O2IB {
            return Err(Errno::EPROTONOSUPPORT);
        }
        let mut names: Vec<String> = intfs.to_vec();
        if names.is_empty() {
            // The LND picks the first interface not yet on that net.
            let used: Vec<&str> = self
                .nis
                .iter()
                .filter(|n| n.nid.net() == net)
                .filter_map(|n| n.intf.as_deref())
                .collect();
            let free = self
                .host_ifs
                .iter()
                .find(|(n, _)| !used.contains(&n.as_str()))
                .ok_or(Errno::ENODEV)?;
            names.push(free.0.clone());
        }
        let mut new = Vec::new();
        for n in &names {
            let ip = self.find_if(n).ok_or(Errno::ENODEV)?;
            let nid = ip_nid(net, ip);
            if self.nis.iter().any(|x| x.nid == nid) || new.iter().any(|x: &FakeNi| x.nid == nid) {
                return Err(Errno::EEXIST);
            }
            new.push(FakeNi {
                nid,
                intf: Some(n.clone()),
                health: 1000,
                tun,
            });
        }
        // A net's NIs stay together, in the order they were added.
        let at = self
            .nis
            .iter()
            .rposition(|x| x.nid.net() == net)
            .map(|i| i + 1)
            .unwrap_or(self.nis.len());
        self.nis.splice(at..at, new);
        Ok(())
    }

    fn ni_abi(&self, idx: usize) -> Option<abi::LnetIocNi> {
        let ni = self.nis.get(idx)?;
        let mut a = abi::LnetIocNi::new();
        a.ni_idx = idx as u32;
        a.ni_status = if ni.health > 0 {
            abi::NI_STATUS_UP
        } else {
            abi::NI_STATUS_DOWN
        };
        a.ni_nid = LnetIocNid::from_nid(&ni.nid);
        a.ni_health_value = ni.health as u32;
        if let Some(i) = &ni.intf {
            abi::put_str(&mut a.ni_intf, i)?;
        }
        a.ni_net_priority = abi::PRIORITY_UNSET;
        a.ni_nid_priority = abi::PRIORITY_UNSET;
        let k = idx as u32;
        if ni.nid.net().lnd() == lnd::LO {
            a.ni_dev_cpt = 0;
            a.ni_ncpts = 1;
            a.ni_cpts[0] = 0;
            return Some(a);
        }
        a.ni_send_count = 100 + k;
        a.ni_recv_count = 200 + k;
        a.ni_drop_count = k;
        a.ni_put_egress = abi::LnetIocLatency {
            lat_samples: 3,
            lat_min_nsec: 1000,
            lat_max_nsec: 3000,
            lat_avg_nsec: 2000,
        };
        a.ni_get_rtt = abi::LnetIocLatency {
            lat_samples: 2,
            lat_min_nsec: 5000,
            lat_max_nsec: 7000,
            lat_avg_nsec: 6000,
        };
        a.ni_put_ack = abi::LnetIocLatency {
            lat_samples: 0,
            lat_min_nsec: 0,
            lat_max_nsec: 0,
            lat_avg_nsec: 0,
        };
        a.ni_sent_stats = [10, 11, 12, 13, 14];
        a.ni_received_stats = [20, 21, 22, 23, 24];
        a.ni_dropped_stats = [0, 1, 0, 0, 0];
        a.ni_hs_interrupts = 1;
        a.ni_hs_dropped = 2;
        a.ni_hs_aborted = 3;
        a.ni_hs_no_route = 4;
        a.ni_hs_timeouts = 5;
        a.ni_hs_error = 6;
        a.ni_ping_count = 7;
        a.ni_next_ping = 12345;
        let d = |v: u32, def: i32| {
            if v == abi::TUNABLE_DEFAULT {
                def as u32
            } else {
                v
            }
        };
        let o2ib = ni.nid.net().lnd() == lnd::O2IB;
        a.ni_peer_timeout = d(ni.tun[0], 180);
        a.ni_peer_credits = d(ni.tun[1], 8);
        a.ni_peer_buffer_credits = d(ni.tun[2], 0);
        a.ni_credits = d(ni.tun[3], 256);
        a.ni_lnd_conns_per_peer = d(ni.tun[4], 1);
        a.ni_lnd_timeout = 50;
        a.ni_lnd_tos = -1i32 as u32;
        if o2ib {
            a.ni_lnd_peercredits_hiw = 4;
            a.ni_lnd_map_on_demand = 1;
            a.ni_lnd_concurrent_sends = 8;
            a.ni_lnd_fmr_pool_size = 512;
            a.ni_lnd_fmr_flush_trigger = 384;
            a.ni_lnd_fmr_cache = 1;
            a.ni_lnd_ntx = 512;
        }
        a.ni_dev_cpt = -1i32 as u32;
        a.ni_ncpts = 2;
        a.ni_cpts[0] = 0;
        a.ni_cpts[1] = 1;
        Some(a)
    }

    fn peer_ni_abi(&self, p: &FakePeer, idx: usize) -> Option<abi::LnetIocPeerNi> {
        let nid = p.nids.get(idx)?;
        let mut a = abi::LnetIocPeerNi::new();
        a.pn_prim_nid = LnetIocNid::from_nid(&p.prim);
        a.pn_idx = idx as u32;
        a.pn_nid = LnetIocNid::from_nid(nid);
        a.pn_state = abi::PEER_NI_STATE_NA;
        a.pn_max_ni_tx_credits = 8;
        a.pn_available_tx_credits = 8;
        a.pn_min_tx_credits = 7;
        a.pn_tx_q_num_of_buf = 0;
        a.pn_available_rtr_credits = 8;
        a.pn_min_rtr_credits = 8;
        a.pn_refcount = 2;
        a.pn_send_count = 5;
        a.pn_recv_count = 6;
        a.pn_drop_count = 0;
        a.pn_put_egress.lat_samples = 1;
        a.pn_sent_stats = [1, 2, 3, 4, 5];
        a.pn_received_stats = [6, 7, 8, 9, 10];
        a.pn_dropped_stats = [0, 0, 0, 0, 0];
        a.pn_health_value = p.health.get(idx).copied().unwrap_or(1000) as u32;
        a.pn_hs_dropped = 1;
        a.pn_hs_timeout = 2;
        a.pn_hs_error = 3;
        a.pn_hs_network_timeout = 4;
        a.pn_ping_count = 0;
        a.pn_next_ping = 0;
        a.pn_net_priority = abi::PRIORITY_UNSET;
        a.pn_nid_priority = abi::PRIORITY_UNSET;
        Some(a)
    }

    fn owner(&self, nid: &Nid) -> Option<usize> {
        self.peers.iter().position(|p| p.nids.contains(nid))
    }

    fn handle(&mut self, req: Request<'_>) -> Result<(), Errno> {
        let cmd = req.cmd();
        let any_time = [
            abi::Cmd::Configure,
            abi::Cmd::Unconfigure,
            abi::Cmd::SetNumaRange,
            abi::Cmd::GetGlobals,
        ];
        if !self.up && !any_time.contains(&cmd) {
            return Err(Errno::ENETDOWN);
        }
        match req {
            Request::Configure(a) => {
                if a.cfg_padding != 0 || a.cfg_flags & !abi::CFG_LOAD_NETWORKS != 0 {
                    return Err(Errno::EINVAL);
                }
                if self.up {
                    return Ok(());
                }
                self.start();
                if a.cfg_flags & abi::CFG_LOAD_NETWORKS != 0 {
                    for (net, ifs) in self.boot_nets.clone() {
                        self.add_net(net, &ifs, [abi::TUNABLE_DEFAULT; 5])?;
                    }
                }
                Ok(())
            }
            Request::Unconfigure(a) => {
                if a.cfg_flags != 0 || a.cfg_padding != 0 {
                    return Err(Errno::EINVAL);
                }
                self.up = false;
                self.nis.clear();
                self.peers.clear();
                let _ = self.routes.del(None, None);
                Ok(())
            }
            Request::NetAdd(a) => {
                let (net, intfs) = net_cfg(a)?;
                let tun = [
                    a.nc_peer_timeout,
                    a.nc_peer_credits,
                    a.nc_peer_buffer_credits,
                    a.nc_credits,
                    a.nc_conns_per_peer,
                ];
                self.add_net(net, &intfs, tun)
            }
            Request::NetDel(a) => {
                let (net, intfs) = net_cfg(a)?;
                if !self.nis.iter().any(|n| n.nid.net() == net) {
                    return Err(Errno::ENOENT);
                }
                if intfs.is_empty() {
                    self.nis.retain(|n| n.nid.net() != net);
                    return Ok(());
                }
                for i in &intfs {
                    let pos = self
                        .nis
                        .iter()
                        .position(|n| n.nid.net() == net && n.intf.as_deref() == Some(i))
                        .ok_or(Errno::ENOENT)?;
                    self.nis.remove(pos);
                }
                Ok(())
            }
            Request::GetNi(a) => {
                *a = self.ni_abi(a.ni_idx as usize).ok_or(Errno::ENOENT)?;
                Ok(())
            }
            Request::SetNiHealth(a) => {
                if a.hv_padding != 0 {
                    return Err(Errno::EINVAL);
                }
                let v = a.hv_value as i32;
                if a.hv_flags & abi::HEALTH_ALL != 0 {
                    self.nis.iter_mut().for_each(|n| n.health = v);
                    return Ok(());
                }
                let nid = a.hv_nid.to_nid().map_err(|_| Errno::EINVAL)?;
                let ni = self
                    .nis
                    .iter_mut()
                    .find(|n| n.nid == nid)
                    .ok_or(Errno::ENOENT)?;
                ni.health = v;
                Ok(())
            }
            Request::SetPeerNiHealth(a) => {
                let v = a.hv_value as i32;
                if a.hv_flags & abi::HEALTH_ALL != 0 {
                    for p in &mut self.peers {
                        p.health.iter_mut().for_each(|h| *h = v);
                    }
                    return Ok(());
                }
                let nid = a.hv_nid.to_nid().map_err(|_| Errno::EINVAL)?;
                let i = self.owner(&nid).ok_or(Errno::ENOENT)?;
                let p = &mut self.peers[i];
                let j = p.nids.iter().position(|n| *n == nid).ok_or(Errno::ENOENT)?;
                p.health[j] = v;
                Ok(())
            }
            Request::PeerAdd(a) => {
                let (prim, nids) = peer_cfg(a)?;
                let i = match self.peers.iter().position(|p| p.prim == prim) {
                    Some(i) => i,
                    None => {
                        if self.owner(&prim).is_some() {
                            return Err(Errno::EEXIST);
                        }
                        self.peers.push(FakePeer {
                            prim,
                            nids: vec![prim],
                            health: vec![1000],
                            mr: a.pc_flags & abi::PEER_NON_MR == 0,
                            locked: a.pc_flags & abi::PEER_LOCK_PRIM != 0,
                        });
                        self.peers.len() - 1
                    }
                };
                for n in nids {
                    if self.owner(&n).is_some() {
                        return Err(Errno::EEXIST);
                    }
                    self.peers[i].nids.push(n);
                    self.peers[i].health.push(1000);
                }
                Ok(())
            }
            Request::PeerDel(a) => {
                let (prim, nids) = peer_cfg(a)?;
                let i = self
                    .peers
                    .iter()
                    .position(|p| p.prim == prim)
                    .ok_or(Errno::ENOENT)?;
                if nids.is_empty() || nids.contains(&prim) {
                    if self.peers[i].locked && a.pc_flags & abi::PEER_FORCE == 0 {
                        return Err(Errno::EPERM);
                    }
                    self.peers.remove(i);
                    return Ok(());
                }
                for n in nids {
                    let p = &mut self.peers[i];
                    let j = p.nids.iter().position(|x| *x == n).ok_or(Errno::ENOENT)?;
                    p.nids.remove(j);
                    p.health.remove(j);
                }
                Ok(())
            }
            Request::GetPeer(a) => {
                let p = self.peers.get(a.pr_idx as usize).ok_or(Errno::ENOENT)?;
                a.pr_nnis = p.nids.len() as u32;
                a.pr_prim_nid = LnetIocNid::from_nid(&p.prim);
                a.pr_multi_rail = u32::from(p.mr);
                // MULTI_RAIL (bit 0) and CONFIGURED (bit 3).
                a.pr_state = u32::from(p.mr) | (1 << 3);
                Ok(())
            }
            Request::GetPeerNi(a) => {
                let prim = a.pn_prim_nid.to_nid().map_err(|_| Errno::EINVAL)?;
                let p = self
                    .peers
                    .iter()
                    .find(|p| p.prim == prim)
                    .ok_or(Errno::ENOENT)?;
                *a = self
                    .peer_ni_abi(p, a.pn_idx as usize)
                    .ok_or(Errno::ENOENT)?;
                Ok(())
            }
            Request::GetStats(a) => {
                *a = self.stats;
                Ok(())
            }
            Request::GetRecoveryQueue(a) => {
                let q = match a.rq_type {
                    abi::RECOVERY_LOCAL => &self.recovery[0],
                    abi::RECOVERY_PEER => &self.recovery[1],
                    _ => return Err(Errno::EINVAL),
                };
                let start = (a.rq_start as usize).min(q.len());
                let page: Vec<Nid> = q[start..].iter().take(self.page).copied().collect();
                a.rq_total = q.len() as u32;
                a.rq_count = page.len() as u32;
                for (slot, n) in a.rq_nids.iter_mut().zip(&page) {
                    *slot = LnetIocNid::from_nid(n);
                }
                Ok(())
            }
            Request::Ping(a) | Request::Discover(a) => {
                let target = a.pg_target.to_nid().map_err(|_| Errno::EINVAL)?;
                let source = a.pg_source.to_nid().map_err(|_| Errno::EINVAL)?;
                self.last_ping = Some((a.pg_timeout_ms, source));
                let reply = match (&self.kept, a.pg_start) {
                    (Some(k), s) if s > 0 && k.target == target => k.clone(),
                    _ => {
                        self.pings_sent += 1;
                        let r = self
                            .pings
                            .iter()
                            .find(|p| p.target == target)
                            .cloned()
                            .ok_or(Errno::EHOSTUNREACH)?;
                        self.kept = Some(r.clone());
                        r
                    }
                };
                let start = (a.pg_start as usize).min(reply.entries.len());
                let page: Vec<(Nid, u32)> = reply.entries[start..]
                    .iter()
                    .take(self.page)
                    .copied()
                    .collect();
                a.pg_total = reply.entries.len() as u32;
                a.pg_count = page.len() as u32;
                a.pg_primary = LnetIocNid::from_nid(&reply.primary);
                a.pg_multi_rail = u32::from(reply.mr);
                for (slot, (n, st)) in a.pg_entries.iter_mut().zip(&page) {
                    slot.pe_nid = LnetIocNid::from_nid(n);
                    slot.pe_status = *st;
                }
                Ok(())
            }
            Request::SetNumaRange(a) => {
                if a.val_padding != 0 {
                    return Err(Errno::EINVAL);
                }
                self.tun.numa_range = a.val_value;
                Ok(())
            }
            Request::GetGlobals(a) => {
                a.gl_numa_range = self.tun.numa_range;
                a.gl_lnd_timeout = self.tun.lnd_timeout;
                Ok(())
            }
            Request::FaultAdd(a) => {
                let (kind, rule) = fault_rule(a)?;
                // New rules go first: they are matched (and listed) first.
                self.faults[kind].insert(0, rule);
                Ok(())
            }
            Request::FaultDel(a) => {
                let kind = fault_kind(a)?;
                let src = a.fr_src.to_nid().map_err(|_| Errno::EINVAL)?;
                let dst = a.fr_dst.to_nid().map_err(|_| Errno::EINVAL)?;
                let rules = &mut self.faults[kind];
                let before = rules.len();
                rules.retain(|r| !r.selected_by(&src, &dst));
                a.fr_index = (before - rules.len()) as u32;
                Ok(())
            }
            Request::FaultReset(a) => {
                let kind = fault_kind(a)?;
                for r in &mut self.faults[kind] {
                    r.reset(0, &mut |_| 0);
                }
                Ok(())
            }
            Request::FaultList(a) => {
                let kind = fault_kind(a)?;
                let r = self.faults[kind]
                    .get(a.fr_index as usize)
                    .ok_or(Errno::ENOENT)?;
                *a = fault_abi(kind, a.fr_index, r);
                Ok(())
            }
            Request::UdspAdd(a) => {
                use lnet_core::udsp::{self, AddPlan};
                let rule = udsp::rule_from_ioctl(udsp_bulk(a)?, a.ud_action_type, a.ud_priority)
                    .map_err(|_| Errno::EINVAL)?;
                match udsp::plan_add(&self.udsp, &rule, a.ud_idx as i32) {
                    AddPlan::Exists => return Err(Errno::EALREADY),
                    AddPlan::Update(i) => self.udsp[i].action = rule.action,
                    AddPlan::Insert(at) => self.udsp.insert(at, rule),
                }
                Ok(())
            }
            Request::UdspDel(a) => {
                if !udsp_bulk(a)?.is_empty() || a.ud_action_type != 0 || a.ud_priority != 0 {
                    return Err(Errno::EINVAL);
                }
                match usize::try_from(a.ud_idx as i32) {
                    Err(_) => self.udsp.clear(),
                    Ok(i) if i < self.udsp.len() => {
                        self.udsp.remove(i);
                    }
                    Ok(_) => return Err(Errno::ENOENT),
                }
                Ok(())
            }
            Request::RouteAdd(a) => {
                if a.rt_idx != 0 || a.rt_flags != 0 {
                    return Err(Errno::EINVAL);
                }
                let gw = a.rt_gateway.to_nid().map_err(|_| Errno::EINVAL)?;
                let spec = lnet_core::route::RouteSpec {
                    hops: a.rt_hops,
                    priority: a.rt_priority,
                    ..lnet_core::route::RouteSpec::new(Net::from_u32(a.rt_net), gw)
                };
                let nis = self.nis.clone();
                let local = move |n: Net| nis.iter().any(|x| x.nid.net() == n);
                let cx = lnet_core::route::AddContext {
                    is_local_net: &local,
                    start_down: false,
                    place: 0,
                };
                let r = self.routes.add(&spec, gw, &cx);
                r.map(|_| ()).map_err(|e| Errno::from_raw(-e.errno()))
            }
            Request::RouteDel(a) => {
                if a.rt_idx != 0 || a.rt_flags != 0 || a.rt_hops != 0 || a.rt_priority != 0 {
                    return Err(Errno::EINVAL);
                }
                let net = (a.rt_net != abi::NET_ANY).then(|| Net::from_u32(a.rt_net));
                let gw = a.rt_gateway.to_nid().map_err(|_| Errno::EINVAL)?;
                let r = self.routes.del(net, (!gw.is_any()).then_some(gw));
                r.map(|_| ()).map_err(|e| Errno::from_raw(-e.errno()))
            }
            Request::GetRoute(a) => {
                let r = *self
                    .routes
                    .get(a.rt_idx as usize)
                    .map_err(|_| Errno::ENOENT)?;
                a.rt_net = r.net.as_u32();
                a.rt_gateway = LnetIocNid::from_nid(&r.gateway);
                a.rt_hops = r.hops;
                a.rt_priority = r.priority;
                a.rt_flags = lnet_core::route::route_flags(0, r.alive, r.single_hop);
                Ok(())
            }
            Request::SetRouting(a) => {
                if a.rtr_enable > 1 {
                    return Err(Errno::EINVAL);
                }
                let on = a.rtr_enable == 1;
                match (&mut self.routing, on) {
                    (Some(r), _) => r.0 = on,
                    (None, true) => self.routing = Some((true, [2048, 16384, 1024])),
                    (None, false) => {}
                }
                Ok(())
            }
            Request::SetBuffers(a) => {
                if let Some((true, counts)) = &mut self.routing {
                    for (c, &b) in counts.iter_mut().zip(a.rtr_buffers.iter()) {
                        if (b as i32) >= 0 {
                            *c = b;
                        }
                    }
                }
                Ok(())
            }
            Request::GetRouting(a) => {
                let (on, counts) = self.routing.ok_or(Errno::ENOENT)?;
                a.rtr_enable = u32::from(on);
                for (i, (p, &n)) in a.rtr_pools.iter_mut().zip(counts.iter()).enumerate() {
                    let n = if on { n } else { 0 };
                    *p = abi::LnetIocRtrPool {
                        rp_npages: [0, 1, 256][i],
                        rp_nbuffers: n,
                        rp_credits: n,
                        rp_mincredits: n,
                    };
                }
                Ok(())
            }
            Request::UdspGet(a) => {
                if !udsp_bulk(a)?.is_empty() || a.ud_action_type != 0 || a.ud_priority != 0 {
                    return Err(Errno::EINVAL);
                }
                let i = usize::try_from(a.ud_idx as i32).map_err(|_| Errno::ENOENT)?;
                let rule = *self.udsp.get(i).ok_or(Errno::ENOENT)?;
                let n = lnet_core::udsp::encode_bulk(&rule, &mut a.ud_bulk).ok_or(Errno::EINVAL)?;
                a.ud_bulk_len = n as u32;
                (a.ud_action_type, a.ud_priority) = lnet_core::udsp::action_to_ioctl(rule.action);
                Ok(())
            }
        }
    }
}

/// The bulk of a UDSP request, checked as the kernel does: within the
/// array, and zero past its length.
fn udsp_bulk(a: &abi::LnetIocUdsp) -> Result<&[u8], Errno> {
    let len = a.ud_bulk_len as usize;
    let (used, rest) = (a.ud_bulk.get(..len), a.ud_bulk.get(len..));
    match (used, rest) {
        (Some(u), Some(r)) if r.iter().all(|&b| b == 0) => Ok(u),
        _ => Err(Errno::EINVAL),
    }
}

/// The kind of a fault request (index into `Fake::faults`).
fn fault_kind(a: &abi::LnetIocFault) -> Result<usize, Errno> {
    if a.fr_padding != 0 {
        return Err(Errno::EINVAL);
    }
    match a.fr_kind {
        abi::FAULT_DROP => Ok(0),
        abi::FAULT_DELAY => Ok(1),
        _ => Err(Errno::EINVAL),
    }
}

/// The rule a FAULT_ADD asks for, checked as the kernel does: EINVAL for a
/// rule that cannot fire or mixes the two kinds' fields.
fn fault_rule(a: &abi::LnetIocFault) -> Result<(usize, Rule), Errno> {
    let kind = fault_kind(a)?;
    let nid = |n: &LnetIocNid| n.to_nid().map_err(|_| Errno::EINVAL);
    let attr = Attr {
        src: nid(&a.fr_src)?,
        dst: nid(&a.fr_dst)?,
        local: nid(&a.fr_local)?,
        ptl_mask: a.fr_ptl_mask,
        msg_mask: a.fr_msg_mask,
    };
    let pace = match (a.fr_rate, a.fr_interval) {
        (0, 0) => return Err(Errno::EINVAL),
        (r, 0) => Pace::Rate(r),
        (0, i) => Pace::Interval(i),
        _ => return Err(Errno::EINVAL),
    };
    if a.fr_flags & !(abi::FAULT_RANDOM | abi::FAULT_DROP_ALL) != 0 {
        return Err(Errno::EINVAL);
    }
    let action = if kind == 0 {
        if a.fr_latency != 0 {
            return Err(Errno::EINVAL);
        }
        Action::Drop {
            health_mask: a.fr_health_mask,
            random: a.fr_flags & abi::FAULT_RANDOM != 0,
            all: a.fr_flags & abi::FAULT_DROP_ALL != 0,
        }
    } else {
        if a.fr_health_mask != 0 || a.fr_flags != 0 {
            return Err(Errno::EINVAL);
        }
        Action::Delay {
            latency: a.fr_latency,
        }
    };
    let rule = Rule::new(attr, pace, action, 0, &mut |_| 0).map_err(|_| Errno::EINVAL)?;
    Ok((kind, rule))
}

/// A rule as FAULT_LIST returns it.
fn fault_abi(kind: usize, index: u32, r: &Rule) -> abi::LnetIocFault {
    let mut a = abi::LnetIocFault::new();
    a.fr_kind = if kind == 0 {
        abi::FAULT_DROP
    } else {
        abi::FAULT_DELAY
    };
    a.fr_index = index;
    a.fr_src = LnetIocNid::from_nid(&r.attr.src);
    a.fr_dst = LnetIocNid::from_nid(&r.attr.dst);
    a.fr_local = LnetIocNid::from_nid(&r.attr.local);
    a.fr_msg_mask = r.attr.msg_mask;
    a.fr_ptl_mask = r.attr.ptl_mask;
    match r.pace {
        Pace::Rate(n) => a.fr_rate = n,
        Pace::Interval(n) => a.fr_interval = n,
    }
    match r.action {
        Action::Drop {
            health_mask,
            random,
            all,
        } => {
            a.fr_health_mask = health_mask;
            if random {
                a.fr_flags |= abi::FAULT_RANDOM;
            }
            if all {
                a.fr_flags |= abi::FAULT_DROP_ALL;
            }
        }
        Action::Delay { latency } => a.fr_latency = latency,
    }
    a.fr_count = r.stats.count;
    a.fr_put = r.stats.put;
    a.fr_ack = r.stats.ack;
    a.fr_get = r.stats.get;
    a.fr_reply = r.stats.reply;
    a.fr_hits = r.stats.hits;
    a
}

fn net_cfg(a: &abi::LnetIocNetCfg) -> Result<(Net, Vec<String>), Errno> {
    let net = Net::parse(&abi::get_str(&a.nc_net)).map_err(|_| Errno::EINVAL)?;
    let n = a.nc_nintf as usize;
    if n > abi::MAX_INTF || a.nc_intf[n..].iter().any(|s| s.iter().any(|&c| c != 0)) {
        return Err(Errno::EINVAL);
    }
    Ok((
        net,
        a.nc_intf[..n].iter().map(|s| abi::get_str(s)).collect(),
    ))
}

fn peer_cfg(a: &abi::LnetIocPeerCfg) -> Result<(Nid, Vec<Nid>), Errno> {
    let n = a.pc_nnids as usize;
    if n > abi::PEER_MAX_NIDS || a.pc_padding != 0 {
        return Err(Errno::EINVAL);
    }
    let prim = a.pc_prim_nid.to_nid().map_err(|_| Errno::EINVAL)?;
    let nids = a.pc_nids[..n]
        .iter()
        .map(|x| x.to_nid().map_err(|_| Errno::EINVAL))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((prim, nids))
}

fn hdr_ok(req: &Request<'_>) -> bool {
    match req {
        Request::Configure(a) | Request::Unconfigure(a) => a.hdr_ok(),
        Request::NetAdd(a) | Request::NetDel(a) => a.hdr_ok(),
        Request::GetNi(a) => a.hdr_ok(),
        Request::SetNiHealth(a) | Request::SetPeerNiHealth(a) => a.hdr_ok(),
        Request::PeerAdd(a) | Request::PeerDel(a) => a.hdr_ok(),
        Request::GetPeer(a) => a.hdr_ok(),
        Request::GetPeerNi(a) => a.hdr_ok(),
        Request::GetStats(a) => a.hdr_ok(),
        Request::GetRecoveryQueue(a) => a.hdr_ok(),
        Request::Ping(a) | Request::Discover(a) => a.hdr_ok(),
        Request::SetNumaRange(a) => a.hdr_ok(),
        Request::GetGlobals(a) => a.hdr_ok(),
        Request::FaultAdd(a)
        | Request::FaultDel(a)
        | Request::FaultReset(a)
        | Request::FaultList(a) => a.hdr_ok(),
        Request::UdspAdd(a) | Request::UdspDel(a) | Request::UdspGet(a) => a.hdr_ok(),
        Request::RouteAdd(a) | Request::RouteDel(a) | Request::GetRoute(a) => a.hdr_ok(),
        Request::SetRouting(a) | Request::SetBuffers(a) | Request::GetRouting(a) => a.hdr_ok(),
    }
}

impl Backend for Fake {
    fn ioctl(&mut self, req: Request<'_>) -> Result<(), Errno> {
        let cmd = req.cmd();
        self.log.push(cmd);
        // The kernel's checks on every call.
        if !hdr_ok(&req) {
            return Err(Errno::EINVAL);
        }
        if let Some(i) = self.fail.iter().position(|(c, _)| *c == cmd) {
            return Err(self.fail.remove(i).1);
        }
        self.handle(req)
    }

    fn read_param(&mut self, name: &str) -> Result<String, ParamError> {
        if name == "router_sensitivity_percentage" {
            return self
                .router_sensitivity
                .map(|v| v.to_string())
                .ok_or(ParamError::Open(Errno::ENOENT));
        }
        let p = Param::from_name(name.as_bytes()).ok_or(ParamError::Open(Errno::ENOENT))?;
        Ok(p.value(&self.tun).to_string())
    }

    fn write_param(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        if name == "router_sensitivity_percentage" {
            return match self.router_sensitivity {
                Some(_) => {
                    let v: i64 = value.parse().map_err(|_| ParamError::Io(Errno::EINVAL))?;
                    if !(0..=100).contains(&v) {
                        return Err(ParamError::Io(Errno::EINVAL));
                    }
                    self.router_sensitivity = Some(v);
                    Ok(())
                }
                None => Err(ParamError::Open(Errno::ENOENT)),
            };
        }
        let p = Param::from_name(name.as_bytes()).ok_or(ParamError::Open(Errno::ENOENT))?;
        if !p.runtime_writable() {
            return Err(ParamError::Open(Errno::EACCES));
        }
        match params::set(&self.tun, p, Some(value.as_bytes())) {
            Ok(c) => {
                self.tun = c.tunables;
                Ok(())
            }
            Err(e) => Err(ParamError::Io(Errno::from_raw(e.errno()))),
        }
    }
}
