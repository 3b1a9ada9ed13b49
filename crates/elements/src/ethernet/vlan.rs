//! The 802.1Q tag arguments and handlers that VLANEncap, EtherVLANEncap and SetVLANAnno
//! share. (Not an element.)

use sluice_core::{Handlers, Packet, Table};
use sluice_lang::args::{Args, FromArg};

/// The 802.1Q tag protocol identifier.
pub(crate) const TPID_8021Q: u16 = 0x8100;

/// Where an element's VLAN TCI comes from and which VLAN goes untagged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VlanTag {
    /// The configured TCI (VLAN ID in the low 12 bits, PCP in the top 3).
    pub(crate) tci: u16,
    /// Take the TCI from each packet's VLAN annotation (`VLAN_TCI ANNO`).
    pub(crate) use_anno: bool,
    /// Packets on this VLAN ID get no tag (NATIVE_VLAN; `None` for -1).
    pub(crate) native: Option<u16>,
    /// Configured for an encapsulating element: `VLAN_TCI` may be `ANNO` and there is a
    /// `NATIVE_VLAN`.
    encap: bool,
    /// NATIVE_VLAN as last given (configuration or handler write); its read handler answers
    /// with it, empty when never given, as Click's does.
    native_given: Option<i64>,
}

fn bounded(what: &str, v: i64, lo: i64, hi: i64) -> Result<i64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{}: expected integer between {} and {}",
            what, lo, hi
        ))
    }
}

fn int(what: &str, s: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let v = i64::from_arg(s.trim()).map_err(|e| format!("{}: {}", what, e))?;
    bounded(what, v, lo, hi)
}

impl VlanTag {
    /// Reads `VLAN_TCI` (positional), `VLAN_PCP` (positional) and `VLAN_ID`; for an
    /// encapsulating element (`encap`), `VLAN_TCI` may be `ANNO` and `NATIVE_VLAN` (default 0)
    /// is read too.
    pub(crate) fn read(args: &mut Args, encap: bool) -> Result<VlanTag, ()> {
        let word = args.read_p::<String>("VLAN_TCI")?;
        let pcp_arg = args.read_p::<i64>("VLAN_PCP")?;
        let id_arg = args.read::<i64>("VLAN_ID")?;
        let native_arg = if encap {
            args.read::<i64>("NATIVE_VLAN")?
        } else {
            None
        };
        let (pcp, id) = (pcp_arg.unwrap_or(0), id_arg.unwrap_or(0));
        let native = native_arg.unwrap_or(if encap { 0 } else { -1 });
        let mut tag = VlanTag {
            encap,
            native_given: native_arg,
            ..VlanTag::default()
        };
        let r = (|| {
            let pcp = bounded("VLAN_PCP", pcp, 0, 7)?;
            let id = bounded("VLAN_ID", id, 0, 0xFFF)?;
            let native = bounded("NATIVE_VLAN", native, -1, 0xFFF)?;
            let tci = match word.as_deref().map(str::trim) {
                Some("ANNO") if encap => {
                    tag.use_anno = true;
                    0
                }
                Some(w) => int("VLAN_TCI", w, 0, 0xFFFF)?,
                None => id,
            };
            tag.tci = (tci | (pcp << 13)) as u16;
            tag.native = (native >= 0).then_some(native as u16);
            Ok::<(), String>(())
        })();
        r.map_err(|e| args.error(e))?;
        Ok(tag)
    }

    /// The TCI for packet `p`.
    pub(crate) fn tci_for(&self, p: &Packet) -> u16 {
        if self.use_anno {
            p.anno().vlan_tci
        } else {
            self.tci
        }
    }

    /// True if a packet with TCI `tci` goes out untagged.
    pub(crate) fn is_native(&self, tci: u16) -> bool {
        self.native == Some(tci & 0xFFF)
    }

    /// The handlers of the tag, as Click answers them: `vlan_tci` (the TCI, or `ANNO`),
    /// `vlan_id` and `vlan_pcp` (its parts, empty in annotation mode) and, for an
    /// encapsulating element (`encap`, as given to [`VlanTag::read`]), `native_vlan` (the
    /// value last given, empty if none).
    pub(crate) fn table(encap: bool) -> Handlers {
        let t = Table::<VlanTag>::new()
            .read("vlan_tci", |t| {
                if t.use_anno {
                    "ANNO".to_string()
                } else {
                    t.tci.to_string()
                }
            })
            .write("vlan_tci", |t, v, _| {
                if t.encap && v.trim() == "ANNO" {
                    t.use_anno = true;
                    return Ok(());
                }
                t.tci = int("VLAN_TCI", v, 0, 0xFFFF)? as u16;
                t.use_anno = false;
                Ok(())
            })
            .setting()
            .read("vlan_id", |t| t.part(t.tci & 0xFFF))
            .write("vlan_id", |t, v, _| {
                let id = int("VLAN_ID", v, 0, 0xFFF)? as u16;
                t.use_anno = false;
                t.tci = (t.tci & !0xFFF) | id;
                Ok(())
            })
            .setting()
            .read("vlan_pcp", |t| t.part(t.tci >> 13))
            .write("vlan_pcp", |t, v, _| {
                let pcp = int("VLAN_PCP", v, 0, 7)? as u16;
                t.tci = (t.tci & 0xFFF) | (pcp << 13);
                Ok(())
            })
            .setting();
        if !encap {
            return t.into();
        }
        t.read("native_vlan", |t| {
            t.native_given.map_or(String::new(), |v| v.to_string())
        })
        .write("native_vlan", |t, v, _| {
            let n = int("NATIVE_VLAN", v, -1, 0xFFF)?;
            t.native = (n >= 0).then_some(n as u16);
            t.native_given = Some(n);
            Ok(())
        })
        .setting()
        .into()
    }

    /// A part of the configured TCI as its handler shows it: empty in annotation mode.
    fn part(&self, v: u16) -> String {
        if self.use_anno {
            String::new()
        } else {
            v.to_string()
        }
    }
}
