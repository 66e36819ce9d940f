//! The LND tunables an administrator gives one NI (`lnetctl net add ...
//! --lnd-tunables`, Lustre's `lnet_lnd_tunables`): taken by LNet as they
//! come over netlink, kept on the NI, and read by its LND when it starts,
//! where each one left unset takes the LND's module parameter
//! (o2iblnd_params::tunables_setup).

use super::credits::UNSET;

/// `ERANGE`.
pub const ERANGE: i32 = 34;

/// The o2iblnd tunables, in `lnet_ni_tunables` order.
pub const O2IB_KEYS: [&str; 7] = [
    "peercredits_hiw",
    "map_on_demand",
    "concurrent_sends",
    "fmr_pool_size",
    "fmr_flush_trigger",
    "fmr_cache",
    "ntx",
];

/// One NI's LND tunables; [`UNSET`] (-1) where not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LndTunables {
    /// Connections to each peer NI (0: the LND's choice).
    pub conns_per_peer: i32,
    /// Type of service (-1: the LND's parameter).
    pub tos: i32,
    /// o2iblnd's own, in [`O2IB_KEYS`] order.
    pub o2ib: [i32; 7],
}

impl LndTunables {
    /// Nothing given.
    pub const UNSET: LndTunables = LndTunables {
        conns_per_peer: UNSET,
        tos: UNSET,
        o2ib: [UNSET; 7],
    };

    /// Takes the o2iblnd key `name` with value `v`, as Lustre's
    /// `kiblnd_nl_set` does: `conns_per_peer` 0..=127 and `tos` -1..=255,
    /// else `ERANGE`; the counts 0..=`i32::MAX` (Lustre stores any and
    /// clamps later; a negative one would wrap its `u32`), else `ERANGE`;
    /// `map_on_demand` and `timeout` are ignored, as Lustre ignores them.
    /// Keys o2iblnd does not know are ignored too.
    pub fn set_o2ib(&mut self, name: &str, v: i64) -> Result<(), i32> {
        let in_range = |lo: i64, hi: i64| {
            if (lo..=hi).contains(&v) {
                // Within i32 by the bounds checked.
                Ok(v as i32)
            } else {
                Err(ERANGE)
            }
        };
        match name {
            "conns_per_peer" => self.conns_per_peer = in_range(0, 127)?,
            // Lustre's lnetctl sends -1 (its unset value) with every add.
            "tos" => self.tos = in_range(-1, 255)?,
            "map_on_demand" | "timeout" => {}
            _ => {
                if let Some(i) = O2IB_KEYS.iter().position(|k| *k == name) {
                    let v = in_range(0, i64::from(i32::MAX))?;
                    if let Some(slot) = self.o2ib.get_mut(i) {
                        *slot = v;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o2ib_keys() {
        let mut t = LndTunables::UNSET;
        assert_eq!(t.set_o2ib("conns_per_peer", 4), Ok(()));
        assert_eq!(t.set_o2ib("tos", 106), Ok(()));
        assert_eq!(t.set_o2ib("concurrent_sends", 32), Ok(()));
        assert_eq!(t.set_o2ib("peercredits_hiw", 16), Ok(()));
        assert_eq!(t.set_o2ib("ntx", 2048), Ok(()));
        assert_eq!(t.set_o2ib("map_on_demand", 256), Ok(()));
        assert_eq!(t.set_o2ib("timeout", 5), Ok(()));
        assert_eq!(t.set_o2ib("no_such_key", 5), Ok(()));
        assert_eq!(t.conns_per_peer, 4);
        assert_eq!(t.tos, 106);
        assert_eq!(t.o2ib, [16, UNSET, 32, UNSET, UNSET, UNSET, 2048]);
        // Unset again by Lustre's own unset value.
        assert_eq!(t.set_o2ib("tos", -1), Ok(()));
        assert_eq!(t.tos, UNSET);
    }

    #[test]
    fn out_of_range_refused() {
        let mut t = LndTunables::UNSET;
        assert_eq!(t.set_o2ib("conns_per_peer", 128), Err(ERANGE));
        assert_eq!(t.set_o2ib("conns_per_peer", -1), Err(ERANGE));
        assert_eq!(t.set_o2ib("tos", 256), Err(ERANGE));
        assert_eq!(t.set_o2ib("tos", -2), Err(ERANGE));
        assert_eq!(t.set_o2ib("ntx", -1), Err(ERANGE));
        assert_eq!(t.set_o2ib("ntx", 1 << 40), Err(ERANGE));
        assert_eq!(t, LndTunables::UNSET);
    }
}
