//! The checks each fuzz target runs on one input. A panic is a finding:
//! either a decoder panicked (never allowed) or a round trip broke.

use lnet_core::{
    cpt, debug, expr_list, hdr, ip2nets, networks, nid, nidlist, o2iblnd, o2iblnd_credits,
    o2iblnd_reject, params, ping, route, routes_param, socklnd,
};

/// NIDs and nets: parsing never panics; what parses prints back to itself;
/// the wire form round-trips.
pub fn nid(data: &[u8]) {
    let _ = nid::Nid::decode(data);
    let Ok(s) = core::str::from_utf8(data) else {
        return;
    };
    let _ = nid::Net::parse(s);
    if let Ok(n) = nid::Nid::parse(s) {
        let text = n.to_string();
        assert_eq!(nid::Nid::parse(&text), Ok(n), "{s:?} -> {text:?}");
        let mut b = [0u8; nid::NID_WIRE_MAX];
        let used = n.encode(&mut b).expect("a parsed NID encodes");
        assert_eq!(nid::Nid::decode(&b[..used]), Ok((n, used)));
    }
}

/// LNet headers: decoding never panics and what decodes re-encodes to
/// something that decodes the same.
pub fn hdr(data: &[u8]) {
    if let Ok(h) = hdr::Hdr::decode_nid4(data) {
        let mut out = [0u8; hdr::HDR_NID4_LEN];
        h.encode_nid4(&mut out)
            .expect("a decoded NID4 header encodes");
        assert_eq!(hdr::Hdr::decode_nid4(&out), Ok(h));
        let _ = h.check();
    }
    if let Ok(h) = hdr::Hdr::decode_nid16(data) {
        let mut out = [0u8; hdr::HDR_NID16_LEN];
        h.encode_nid16(&mut out)
            .expect("a decoded large header encodes");
        assert_eq!(hdr::Hdr::decode_nid16(&out), Ok(h));
    }
}

/// networks= and ip2nets=: never panic; a valid networks string gives as
/// many NIs as it says; what ip2nets selects is a valid networks string.
pub fn networks(data: &[u8]) {
    let Ok(s) = core::str::from_utf8(data) else {
        return;
    };
    if let Ok(n) = networks::validate(s, 4) {
        let counted = networks::for_each_ni(s, 4, |_| Ok::<(), ()>(()));
        assert_eq!(counted, Ok(Ok(n)));
    }
    let _ = networks::cpt_list_valid(s, 4);
    // The same text as ip2nets: what it selects is a valid networks string.
    let mut out = [0u8; 512];
    if let Ok(n) = ip2nets::resolve(s, &[0x0a01_0001, 0xc0a8_0105], &mut out) {
        let picked = core::str::from_utf8(&out[..n]).expect("ip2nets output is text");
        assert!(
            networks::validate(picked, u32::MAX).is_ok(),
            "{s:?} -> {picked:?}"
        );
    }
}

/// Module parameters: any text written to any parameter leaves the
/// tunables consistent.
pub fn params(data: &[u8]) {
    let mut t = params::Tunables::DEFAULT;
    // The first byte picks the parameter, the rest is the text written;
    // several writes in a row, split at 0xff.
    for chunk in data.split(|&b| b == 0xff) {
        let Some((&which, text)) = chunk.split_first() else {
            continue;
        };
        let p = params::Param::ALL[usize::from(which) % params::Param::ALL.len()];
        if let Ok(c) = params::set(&t, p, Some(text)) {
            t = c.tunables;
        }
        assert!(t.health_sensitivity <= params::MAX_HEALTH_VALUE);
        assert!(t.transaction_timeout > 0);
        assert!(t.retry_count <= t.transaction_timeout);
        assert!(t.health_sensitivity != 0 || t.retry_count == 0);
        assert_eq!(
            t.lnd_timeout,
            params::lnd_timeout(t.transaction_timeout, t.retry_count)
        );
        debug_mask(text);
    }
}

/// The debug mask's text: parsing never panics, and a mask's names parse
/// back to it (with the classes no mask silences).
fn debug_mask(text: &[u8]) {
    let Ok(m) = debug::parse(text, debug::DEFAULT) else {
        return;
    };
    let mut names = String::new();
    debug::write_names(&mut names, m).expect("names of a mask");
    let back = debug::parse(names.as_bytes(), 0);
    let want = if m == 0 { 0 } else { m | debug::CANTMASK };
    assert_eq!(back, Ok(want), "{text:?} -> {names:?}");
}

/// socklnd: acceptor requests, hellos and ksock_msg headers.
pub fn socklnd(data: &[u8]) {
    let _ = socklnd::AcceptorRequest::decode(data);
    if let Ok(head) = socklnd::HelloHead::parse(data) {
        if let Ok(h) = socklnd::Hello::decode(&head, data) {
            assert!(h.nips <= socklnd::HELLO_MAX_IPS);
            if !head.flip {
                let mut out = [0u8; 80];
                let n = h.encode(&mut out).expect("a decoded hello encodes");
                assert_eq!(n, head.base_len);
                let again = socklnd::HelloHead::parse(&out).expect("re-encoded head");
                assert_eq!(
                    socklnd::Hello::decode(&again, &out),
                    Ok(socklnd::Hello { nips: 0, ..h })
                );
            }
        }
    }
    for flip in [false, true] {
        if let Ok(m) = socklnd::KsockMsg::decode(data, flip) {
            let _ = m.zc_acks();
        }
    }
}

/// Ping buffers: parsing and walking the entries never panics.
pub fn ping(data: &[u8]) {
    if let Ok(p) = ping::PingInfo::parse(data, 4096) {
        let _ = p.sequence();
        let _ = p.nid4_entries().count();
        let _ = p.large_entries().count();
        let _ = p.primary();
        assert!(p.needed_len() >= ping::HDR_LEN + ping::NID4_ENTRY_LEN);
    }
}

/// o2iblnd messages and rejects: decoding never panics; a decoded message
/// re-encodes to bytes that decode to the same message.
pub fn o2iblnd(data: &[u8]) {
    let _ = o2iblnd::MsgHead::parse(data);
    if let Ok(m) = o2iblnd::Msg::decode(data) {
        let mut out = [0u8; 4096];
        if let Some(n) = m.encode(&mut out) {
            let again = o2iblnd::Msg::decode(&out[..n]).expect("a re-encoded message decodes");
            let mut out2 = [0u8; 4096];
            let n2 = again.encode(&mut out2).expect("and encodes again");
            assert_eq!(&out[..n], &out2[..n2]);
        }
        o2iblnd_writes(&m, data);
    }
    if let Ok(r) = o2iblnd::Rej::decode(data) {
        let mut out = [0u8; 64];
        if let Some(n) = r.encode(&mut out) {
            assert!(o2iblnd::Rej::decode(&out[..n]).is_ok());
        }
    }
    o2iblnd_after_reject(data);
    o2iblnd_credit_ops(data);
}

/// A peer's RDMA descriptor, however malformed, is written into with
/// writes that stay inside its fragments and cover exactly the bytes asked.
fn o2iblnd_writes(m: &o2iblnd::Msg<'_>, data: &[u8]) {
    let rd = match m.body {
        o2iblnd::MsgBody::PutAck { rd, .. } | o2iblnd::MsgBody::GetReq { rd, .. } => rd,
        _ => return,
    };
    let nob = data
        .get(..4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let max = usize::from(data.get(4).copied().unwrap_or(16));
    match rd.writes(nob, max) {
        Ok(w) => {
            let mut at = 0u32;
            let mut n = 0;
            for (x, f) in w.zip(rd.frags().filter(|f| f.nob > 0)) {
                assert_eq!((x.loff, x.raddr), (at, f.addr));
                assert!(x.len > 0 && x.len <= f.nob);
                at += x.len;
                n += 1;
            }
            assert_eq!(at, nob);
            assert!(n <= max);
        }
        Err(o2iblnd::RdmaPlanError::SinkTooSmall { room, .. }) => assert!(u64::from(nob) > room),
        Err(o2iblnd::RdmaPlanError::TooManyWrites { need, max: m }) => assert!(need > m),
    }
}

/// A reject, however malformed, never has the active side reconnect
/// asking for more than it asked before; reconnects past the high-water
/// mark wait at most a second; the passive side refuses only a changed
/// incarnation or a race it wins.
fn o2iblnd_after_reject(data: &[u8]) {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let sent = o2iblnd::ConnParams {
        queue_depth: u16::from(byte(0)),
        max_frags: u16::from_le_bytes([byte(1), byte(2)]),
        max_msg_size: 4096,
    };
    let cm_status = i32::from(byte(3));
    let tries = u32::from(byte(4));
    let now = u64::from_le_bytes(core::array::from_fn(|i| byte(5 + i))) >> 8;
    let at = o2iblnd_reject::reconnect_at_ms(tries, now);
    assert!(at >= now && at <= now + 1000);
    assert_eq!(at == now, tries < o2iblnd_reject::RECONN_HIGH_RACE);
    let (known, stamp) = (u64::from(byte(13) % 3), u64::from(byte(14) % 3));
    let (src, ours) = (u64::from(byte(15)), u64::from(byte(16)));
    let connecting = byte(17) & 1 != 0;
    match o2iblnd_reject::passive_verdict(known, stamp, connecting, tries, src, ours) {
        o2iblnd_reject::Passive::Stale => assert!(known != 0 && known != stamp),
        o2iblnd_reject::Passive::Race => {
            assert!(connecting && src < ours && tries < o2iblnd_reject::MAX_CONN_RACES)
        }
        o2iblnd_reject::Passive::Accept { .. } => assert!(known == 0 || known == stamp),
    }
    let rej = o2iblnd::Rej::decode(data.get(5..).unwrap_or(&[])).ok();
    match o2iblnd_reject::after_reject(cm_status, rej.as_ref(), &sent, 7) {
        o2iblnd_reject::AfterReject::Reconnect {
            queue_depth,
            max_frags,
            ..
        } => {
            assert!(queue_depth <= sent.queue_depth && max_frags <= sent.max_frags);
        }
        o2iblnd_reject::AfterReject::GiveUp(e) => assert!(e < 0),
        o2iblnd_reject::AfterReject::LostRace => {}
    }
}

/// Any sequence of credit operations keeps the counts within the queue
/// depth and the posted sends within `concurrent_sends`.
fn o2iblnd_credit_ops(data: &[u8]) {
    use o2iblnd::MsgType;
    let (Some(&d), Some(&cs)) = (data.first(), data.get(1)) else {
        return;
    };
    let depth = u16::from(d);
    let mut c = o2iblnd_credits::Credits::new(depth, u16::from(cs), 8, 7);
    let types = MsgType::ALL;
    for &op in data.iter().skip(2) {
        let t = types[usize::from(op >> 4) % types.len()];
        match op & 7 {
            0 | 1 => {
                if let o2iblnd_credits::Post::Now { credits } = c.post(t, op & 8 != 0) {
                    if op & 1 != 0 {
                        c.unpost(t, credits);
                    }
                }
            }
            2 => c.send_done(t),
            3 => {
                let _ = c.returned(op >> 3);
            }
            4 => c.rx_done(o2iblnd_credits::rx_credit(t)),
            5 => {
                let _ = c.take_reserved();
            }
            _ => {
                let _ = c.need_noop(op & 8 != 0, op & 16 != 0, op & 32 != 0);
            }
        }
        assert!(c.credits <= c.queue_depth, "{c:?}");
        assert!(c.outstanding <= c.queue_depth, "{c:?}");
        assert!(c.posted <= c.concurrent_sends, "{c:?}");
        assert!(c.reserved <= c.queue_depth, "{c:?}");
    }
}

/// A machine for the cpu_pattern target: 2 nodes of 3 cores of 2
/// hyperthreads (CPUs 0-11, node = cpu / 6, core = cpu / 2), CPU 11
/// offline.
struct CptMachine;

#[derive(Clone)]
struct CptSet(u64);

impl cpt::CpuSet for CptSet {
    fn next(&self, after: Option<u32>) -> Option<u32> {
        let from = after.map_or(0, |a| a + 1);
        (from..64).find(|c| self.0 >> c & 1 == 1)
    }
    fn clear(&mut self, cpu: u32) {
        self.0 &= !(1u64 << cpu);
    }
    fn test(&self, cpu: u32) -> bool {
        cpu < 64 && self.0 >> cpu & 1 == 1
    }
    fn weight(&self) -> u32 {
        self.0.count_ones()
    }
}

const CPT_CPUS: u32 = 12;

impl cpt::Topology for CptMachine {
    type Set = CptSet;
    fn nr_cpu_ids(&self) -> u32 {
        CPT_CPUS
    }
    fn nr_node_ids(&self) -> u32 {
        2
    }
    fn possible_cpus(&self) -> u32 {
        CPT_CPUS
    }
    fn online_cpus(&self) -> u32 {
        CPT_CPUS - 1
    }
    fn online_nodes(&self) -> u32 {
        2
    }
    fn cpu_online(&self, cpu: u32) -> bool {
        cpu < CPT_CPUS - 1
    }
    fn next_online_node(&self, after: Option<u32>) -> Option<u32> {
        let n = after.map_or(0, |a| a + 1);
        (n < 2).then_some(n)
    }
    fn node_cpus(&self, node: u32) -> Result<CptSet, cpt::CptError> {
        Ok(CptSet(0x3f << (6 * node)))
    }
    fn socket_within(&self, cpu: u32, within: &CptSet) -> Result<CptSet, cpt::CptError> {
        Ok(CptSet((0x3f << (6 * (cpu / 6)) & within.0) | 1 << cpu))
    }
    fn core_within(&self, cpu: u32, within: &CptSet) -> Result<CptSet, cpt::CptError> {
        Ok(CptSet((0b11 << (cpu / 2 * 2) & within.0) | 1 << cpu))
    }
    fn threads_per_core(&self) -> u32 {
        2
    }
}

/// Lustre's table over bit masks (without node masks).
struct CptTable {
    parts: Vec<u64>,
    cpu2cpt: [i32; CPT_CPUS as usize],
}

impl cpt::Table for CptTable {
    fn nparts(&self) -> u32 {
        self.parts.len() as u32
    }
    fn set_cpu(&mut self, cpt: u32, cpu: u32) -> bool {
        if cpu >= CPT_CPUS - 1 || self.cpu2cpt[cpu as usize] != -1 {
            return false;
        }
        self.parts[cpt as usize] |= 1 << cpu;
        self.cpu2cpt[cpu as usize] = cpt as i32;
        true
    }
    fn set_node(&mut self, cpt: u32, node: u32) -> bool {
        if node >= 2 || cpt >= self.nparts() {
            return false;
        }
        for cpu in 6 * node..6 * node + 6 {
            self.parts[cpt as usize] |= 1 << cpu;
            self.cpu2cpt[cpu as usize] = cpt as i32;
        }
        true
    }
    fn unset_cpu(&mut self, cpt: i32, cpu: u32) {
        let Some(&of) = self.cpu2cpt.get(cpu as usize) else {
            return;
        };
        if of >= 0 && (cpt == cpt::CPT_ANY || cpt == of) {
            self.del_cpu(of as u32, cpu);
        }
    }
    fn del_cpu(&mut self, cpt: u32, cpu: u32) {
        self.parts[cpt as usize] &= !(1 << cpu);
        self.cpu2cpt[cpu as usize] = -1;
    }
    fn weight(&self, cpt: u32) -> u32 {
        self.parts[cpt as usize].count_ones()
    }
    fn online(&self, cpt: u32) -> bool {
        self.parts[cpt as usize] & ((1 << (CPT_CPUS - 1)) - 1) != 0
    }
    fn cpt_of_cpu(&self, cpu: u32) -> i32 {
        self.cpu2cpt.get(cpu as usize).copied().unwrap_or(-1)
    }
    fn next_cpu(&self, cpt: u32, after: Option<u32>) -> Option<u32> {
        cpt::CpuSet::next(&CptSet(self.parts[cpt as usize]), after)
    }
}

/// cpu_pattern (first byte: cpu_npartitions): never panics, never indexes
/// a partition or CPU out of range (the model above would panic), and a
/// table it accepts has every partition online.
pub fn cpt(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let Ok(pattern) = core::str::from_utf8(rest) else {
        return;
    };
    let alloc = |k: u32| {
        if k > 64 {
            return Err(cpt::CptError::NoMemory);
        }
        Ok(CptTable {
            parts: vec![0; k as usize],
            cpu2cpt: [-1; CPT_CPUS as usize],
        })
    };
    if let Ok(t) = cpt::build(&CptMachine, i32::from(n as i8), pattern, alloc) {
        for p in 0..cpt::Table::nparts(&t) {
            assert!(
                cpt::Table::online(&t, p),
                "{pattern:?}: partition {p} offline"
            );
        }
    }
    let _ = cpt::parse_expr_list(rest, 16);
}

/// A `Vec` the NID lists can be built in (the store the kernel fills is
/// `KVec`).
pub struct V<T>(Vec<T>);

impl<T> nidlist::Seq<T> for V<T> {
    fn try_push(&mut self, v: T) -> Result<(), nidlist::NoMem> {
        self.0.push(v);
        Ok(())
    }
    fn items(&self) -> &[T] {
        &self.0
    }
    fn items_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// The store of [`V`]s.
pub struct VStore;

impl nidlist::Store for VStore {
    type Seq<T> = V<T>;
    fn seq<T>() -> V<T> {
        V(Vec::new())
    }
}

/// NID lists and expression lists: parsing never panics; a parsed list
/// prints to text that parses to a list printing the same once settled
/// (a /32 netmask prints as an address), and matching the NIDs of the
/// input's words gives the same answer on every form.
pub fn nidlist(data: &[u8]) {
    let ranges: Result<Vec<_>, _> = expr_list::parse(data, 0, 255).collect();
    if let Ok(r) = ranges {
        let text = expr_list::ListDisplay(&r).to_string();
        let back: Vec<_> = expr_list::parse(text.as_bytes(), 0, 255)
            .collect::<Result<_, _>>()
            .expect("a printed expression list parses");
        assert_eq!(expr_list::count(&back), expr_list::count(&r), "{text:?}");
    }
    let Ok(l) = nidlist::NidList::<VStore>::parse(data) else {
        return;
    };
    let printed = l.to_string();
    let again = nidlist::NidList::<VStore>::parse(printed.as_bytes())
        .unwrap_or_else(|e| panic!("{printed:?} does not parse: {e:?}"));
    let settled = again.to_string();
    let third = nidlist::NidList::<VStore>::parse(settled.as_bytes()).expect("settled text parses");
    assert_eq!(third.to_string(), settled);
    let _ = nidlist::single_mask(l.masks());
    for word in core::str::from_utf8(data).unwrap_or("").split(' ') {
        if let Ok(n) = nid::Nid::parse(word) {
            assert_eq!(l.matches(&n), again.matches(&n), "{word:?} in {printed:?}");
        }
    }
}

/// routes= and the --gateway list: never panic; what parses gives routes
/// the route checks accept but for the node's nets, as many as validate
/// counts; the routes go into a table without breaking its order.
pub fn routes(data: &[u8]) {
    let _ = routes_param::for_each_gateway(data, |n| assert!(!n.is_any()));
    let Ok(n) = routes_param::validate(data) else {
        return;
    };
    let mut table = route::RouteTable::new(RouteVec(Vec::new()), route::rnet_hash_bits(0));
    let locals = |net: nid::Net| net.lnd() == nid::lnd::SOCK || net.lnd() == nid::lnd::O2IB;
    let mut given = 0usize;
    let r = routes_param::for_each_route(data, |spec| {
        given += 1;
        assert!(route::hops_valid(spec.hops));
        let cx = route::AddContext {
            is_local_net: &locals,
            start_down: false,
            place: given as u32,
        };
        let _ = table.add(&spec, spec.gateway, &cx);
        Ok::<(), ()>(())
    });
    assert_eq!(r, Ok(Ok(())));
    assert_eq!(given, n);
    let nets: Vec<nid::Net> = table.nets().collect();
    let mut seen = nets.clone();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), nets.len(), "a net split in the table");
    for net in nets {
        assert!(table.routes_to(net).iter().all(|r| r.net == net));
        let _ = table.del(Some(net), None);
    }
    assert!(table.routes().is_empty());
}

/// A `Vec` the route table can live in.
pub struct RouteVec(Vec<route::Route>);

impl nidlist::Seq<route::Route> for RouteVec {
    fn try_push(&mut self, v: route::Route) -> Result<(), nidlist::NoMem> {
        self.0.push(v);
        Ok(())
    }
    fn items(&self) -> &[route::Route] {
        &self.0
    }
    fn items_mut(&mut self) -> &mut [route::Route] {
        &mut self.0
    }
}

impl route::List<route::Route> for RouteVec {
    fn pop(&mut self) -> Option<route::Route> {
        self.0.pop()
    }
}
