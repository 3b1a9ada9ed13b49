//! The 802.1Q tag arguments and handlers that VLANEncap, EtherVLANEncap and SetVLANAnno
//! share. (Not an element.)

use sluice_core::Packet;
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
    /// Reads `VLAN_TCI` (positional; `ANNO` only if `anno_ok`), `VLAN_PCP` (positional),
    /// `VLAN_ID` and, if `native_ok`, `NATIVE_VLAN` (default 0).
    pub(crate) fn read(args: &mut Args, anno_ok: bool, native_ok: bool) -> Result<VlanTag, ()> {
        let word = args.read_p::<String>("VLAN_TCI")?;
        let pcp_arg = args.read_p::<i64>("VLAN_PCP")?;
        let id_arg = args.read::<i64>("VLAN_ID")?;
        let native_arg = if native_ok {
            args.read::<i64>("NATIVE_VLAN")?
        } else {
            None
        };
        let (pcp, id) = (pcp_arg.unwrap_or(0), id_arg.unwrap_or(0));
        let native = native_arg.unwrap_or(if native_ok { 0 } else { -1 });
        let mut tag = VlanTag {
            native_given: native_arg,
            ..VlanTag::default()
        };
        let r = (|| {
            let pcp = bounded("VLAN_PCP", pcp, 0, 7)?;
            let id = bounded("VLAN_ID", id, 0, 0xFFF)?;
            let native = bounded("NATIVE_VLAN", native, -1, 0xFFF)?;
            let tci = match word.as_deref().map(str::trim) {
                Some("ANNO") if anno_ok => {
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

    /// Reads handler `vlan_tci` (the TCI, or `ANNO`), `vlan_id` and `vlan_pcp` (its parts,
    /// empty in annotation mode) or `native_vlan` (the value last given, empty if none), as
    /// Click answers them.
    pub(crate) fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "vlan_tci" if self.use_anno => "ANNO".to_string(),
            "vlan_tci" => self.tci.to_string(),
            "vlan_id" | "vlan_pcp" if self.use_anno => String::new(),
            "vlan_id" => (self.tci & 0xFFF).to_string(),
            "vlan_pcp" => (self.tci >> 13).to_string(),
            "native_vlan" => self.native_given.map_or(String::new(), |v| v.to_string()),
            _ => return None,
        })
    }

    /// Writes one of the handlers [`VlanTag::read_handler`] reads; `None` if `name` is not one.
    pub(crate) fn write_handler(
        &mut self,
        name: &str,
        v: &str,
        anno_ok: bool,
    ) -> Option<Result<(), String>> {
        let r = match name {
            "vlan_tci" if anno_ok && v.trim() == "ANNO" => {
                self.use_anno = true;
                Ok(())
            }
            "vlan_tci" => int("VLAN_TCI", v, 0, 0xFFFF).map(|t| {
                self.use_anno = false;
                self.tci = t as u16;
            }),
            "vlan_id" => int("VLAN_ID", v, 0, 0xFFF).map(|id| {
                self.use_anno = false;
                self.tci = (self.tci & !0xFFF) | id as u16;
            }),
            "vlan_pcp" => int("VLAN_PCP", v, 0, 7).map(|pcp| {
                self.tci = (self.tci & 0xFFF) | ((pcp as u16) << 13);
            }),
            "native_vlan" => int("NATIVE_VLAN", v, -1, 0xFFF).map(|n| {
                self.native = (n >= 0).then_some(n as u16);
                self.native_given = Some(n);
            }),
            _ => return None,
        };
        Some(r)
    }
}
