//! The seam between lnetctl's command logic and the kernel: one ioctl
//! request at a time on /dev/lnet, plus reads and writes of LNet's module
//! parameters. `DevLnet` is the real implementation; host tests use an
//! in-memory double (`crate::fake`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

use nix::errno::Errno;

use crate::abi::{self, Cmd, IocArg};

/// The text of `e` as the C library's `strerror` gives it (Lustre's
/// tools print it in their error messages).
pub fn strerror(e: Errno) -> String {
    let s = std::io::Error::from_raw_os_error(e as i32).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// One ioctl with its argument; the variant fixes the command, so a command
/// can only be issued with its own structure.
pub enum Request<'a> {
    Configure(&'a mut abi::LnetIocConfig),
    Unconfigure(&'a mut abi::LnetIocConfig),
    NetAdd(&'a mut abi::LnetIocNetCfg),
    NetDel(&'a mut abi::LnetIocNetCfg),
    GetNi(&'a mut abi::LnetIocNi),
    SetNiHealth(&'a mut abi::LnetIocHealth),
    PeerAdd(&'a mut abi::LnetIocPeerCfg),
    PeerDel(&'a mut abi::LnetIocPeerCfg),
    GetPeer(&'a mut abi::LnetIocPeer),
    GetPeerNi(&'a mut abi::LnetIocPeerNi),
    SetPeerNiHealth(&'a mut abi::LnetIocHealth),
    GetStats(&'a mut abi::LnetIocStats),
    GetRecoveryQueue(&'a mut abi::LnetIocRecovery),
    Ping(&'a mut abi::LnetIocPing),
    Discover(&'a mut abi::LnetIocPing),
    SetNumaRange(&'a mut abi::LnetIocValue),
    GetGlobals(&'a mut abi::LnetIocGlobals),
    // The fault commands are lctl's (src/bin/lctl.rs shares this module);
    // lnetctl itself never issues them.
    #[allow(dead_code)]
    FaultAdd(&'a mut abi::LnetIocFault),
    #[allow(dead_code)]
    FaultDel(&'a mut abi::LnetIocFault),
    #[allow(dead_code)]
    FaultReset(&'a mut abi::LnetIocFault),
    #[allow(dead_code)]
    FaultList(&'a mut abi::LnetIocFault),
    UdspAdd(&'a mut abi::LnetIocUdsp),
    UdspDel(&'a mut abi::LnetIocUdsp),
    UdspGet(&'a mut abi::LnetIocUdsp),
    RouteAdd(&'a mut abi::LnetIocRoute),
    RouteDel(&'a mut abi::LnetIocRoute),
    GetRoute(&'a mut abi::LnetIocRoute),
    SetRouting(&'a mut abi::LnetIocRouting),
    SetBuffers(&'a mut abi::LnetIocRouting),
    GetRouting(&'a mut abi::LnetIocRouting),
}

impl Request<'_> {
    /// The command this request issues.
    pub fn cmd(&self) -> Cmd {
        match self {
            Request::Configure(_) => Cmd::Configure,
            Request::Unconfigure(_) => Cmd::Unconfigure,
            Request::NetAdd(_) => Cmd::NetAdd,
            Request::NetDel(_) => Cmd::NetDel,
            Request::GetNi(_) => Cmd::GetNi,
            Request::SetNiHealth(_) => Cmd::SetNiHealth,
            Request::PeerAdd(_) => Cmd::PeerAdd,
            Request::PeerDel(_) => Cmd::PeerDel,
            Request::GetPeer(_) => Cmd::GetPeer,
            Request::GetPeerNi(_) => Cmd::GetPeerNi,
            Request::SetPeerNiHealth(_) => Cmd::SetPeerNiHealth,
            Request::GetStats(_) => Cmd::GetStats,
            Request::GetRecoveryQueue(_) => Cmd::GetRecoveryQueue,
            Request::Ping(_) => Cmd::Ping,
            Request::Discover(_) => Cmd::Discover,
            Request::SetNumaRange(_) => Cmd::SetNumaRange,
            Request::GetGlobals(_) => Cmd::GetGlobals,
            Request::FaultAdd(_) => Cmd::FaultAdd,
            Request::FaultDel(_) => Cmd::FaultDel,
            Request::FaultReset(_) => Cmd::FaultReset,
            Request::FaultList(_) => Cmd::FaultList,
            Request::UdspAdd(_) => Cmd::UdspAdd,
            Request::UdspDel(_) => Cmd::UdspDel,
            Request::UdspGet(_) => Cmd::UdspGet,
            Request::RouteAdd(_) => Cmd::RouteAdd,
            Request::RouteDel(_) => Cmd::RouteDel,
            Request::GetRoute(_) => Cmd::GetRoute,
            Request::SetRouting(_) => Cmd::SetRouting,
            Request::SetBuffers(_) => Cmd::SetBuffers,
            Request::GetRouting(_) => Cmd::GetRouting,
        }
    }
}

/// A failed module-parameter access. Lustre's lnetctl reports the two
/// differently (`LUSTRE_CFG_RC_NO_MATCH` / `LUSTRE_CFG_RC_GENERIC_ERR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// The parameter's file could not be opened (no such parameter, or the
    /// module is not loaded).
    Open(Errno),
    /// The read or write itself failed (for a write: the kernel's setter
    /// rejected the value).
    Io(Errno),
}

impl ParamError {
    /// The errno behind the failure.
    pub fn errno(self) -> Errno {
        match self {
            ParamError::Open(e) | ParamError::Io(e) => e,
        }
    }
}

/// What lnetctl needs from the kernel.
pub trait Backend {
    /// Issues one ioctl on /dev/lnet.
    fn ioctl(&mut self, req: Request<'_>) -> Result<(), Errno>;

    /// Reads `/sys/module/lnet/parameters/<name>` (trimmed).
    fn read_param(&mut self, name: &str) -> Result<String, ParamError>;

    /// Writes `value` to `/sys/module/lnet/parameters/<name>`.
    fn write_param(&mut self, name: &str, value: &str) -> Result<(), ParamError>;
}

/// The real backend: ioctls on /dev/lnet (opened on first use and kept, so
/// the pages of one ping come from the same open file) and sysfs.
pub struct DevLnet {
    dev_path: PathBuf,
    params_dir: PathBuf,
    dev: Option<File>,
}

/// Where LNet's module parameters are.
pub const PARAMS_DIR: &str = "/sys/module/lnet/parameters";

fn errno_of(e: &std::io::Error) -> Errno {
    Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO))
}

impl DevLnet {
    /// The backend of /dev/lnet and /sys/module/lnet/parameters.
    pub fn new() -> DevLnet {
        DevLnet {
            dev_path: PathBuf::from(abi::DEV_PATH),
            params_dir: PathBuf::from(PARAMS_DIR),
            dev: None,
        }
    }

    /// A backend on other paths (host tests).
    #[cfg(test)]
    pub fn with_paths(dev_path: &std::path::Path, params_dir: &std::path::Path) -> DevLnet {
        DevLnet {
            dev_path: dev_path.to_path_buf(),
            params_dir: params_dir.to_path_buf(),
            dev: None,
        }
    }

    fn dev(&mut self) -> Result<&File, Errno> {
        if self.dev.is_none() {
            // A missing /dev/lnet is ENODEV: ENOENT from an ioctl means "past
            // the last element" to the listing commands, which would then
            // print an empty list instead of the failure.
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&self.dev_path)
                .map_err(|e| match errno_of(&e) {
                    Errno::ENOENT => Errno::ENODEV,
                    other => other,
                })?;
            self.dev = Some(f);
        }
        self.dev.as_ref().ok_or(Errno::EBADF)
    }

    fn raw<T: IocArg>(&mut self, cmd: Cmd, arg: &mut T) -> Result<(), Errno> {
        debug_assert_eq!(core::mem::size_of::<T>(), cmd.arg_size());
        let fd = self.dev()?.as_raw_fd();
        // The kernel reads and writes only the size the request encodes,
        // which is `T`'s (checked above), and `fd` is open for the call.
        // SAFETY: `arg` is an exclusively borrowed repr(C) plain-data struct.
        let rc = unsafe { nix::libc::ioctl(fd, cmd.request(), arg as *mut T) };
        Errno::result(rc).map(drop)
    }
}

impl Default for DevLnet {
    fn default() -> Self {
        DevLnet::new()
    }
}

impl Backend for DevLnet {
    fn ioctl(&mut self, req: Request<'_>) -> Result<(), Errno> {
        let cmd = req.cmd();
        match req {
            Request::Configure(a) | Request::Unconfigure(a) => self.raw(cmd, a),
            Request::NetAdd(a) | Request::NetDel(a) => self.raw(cmd, a),
            Request::GetNi(a) => self.raw(cmd, a),
            Request::SetNiHealth(a) | Request::SetPeerNiHealth(a) => self.raw(cmd, a),
            Request::PeerAdd(a) | Request::PeerDel(a) => self.raw(cmd, a),
            Request::GetPeer(a) => self.raw(cmd, a),
            Request::GetPeerNi(a) => self.raw(cmd, a),
            Request::GetStats(a) => self.raw(cmd, a),
            Request::GetRecoveryQueue(a) => self.raw(cmd, a),
            Request::Ping(a) | Request::Discover(a) => self.raw(cmd, a),
            Request::SetNumaRange(a) => self.raw(cmd, a),
            Request::GetGlobals(a) => self.raw(cmd, a),
            Request::FaultAdd(a)
            | Request::FaultDel(a)
            | Request::FaultReset(a)
            | Request::FaultList(a) => self.raw(cmd, a),
            Request::UdspAdd(a) | Request::UdspDel(a) | Request::UdspGet(a) => self.raw(cmd, a),
            Request::RouteAdd(a) | Request::RouteDel(a) | Request::GetRoute(a) => self.raw(cmd, a),
            Request::SetRouting(a) | Request::SetBuffers(a) | Request::GetRouting(a) => {
                self.raw(cmd, a)
            }
        }
    }

    fn read_param(&mut self, name: &str) -> Result<String, ParamError> {
        let mut f =
            File::open(self.params_dir.join(name)).map_err(|e| ParamError::Open(errno_of(&e)))?;
        let mut s = String::new();
        f.read_to_string(&mut s)
            .map_err(|e| ParamError::Io(errno_of(&e)))?;
        Ok(s.trim().to_string())
    }

    fn write_param(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let mut f = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.params_dir.join(name))
            .map_err(|e| ParamError::Open(errno_of(&e)))?;
        // One write(2): the kernel's setter sees the whole value at once.
        f.write_all(value.as_bytes())
            .map_err(|e| ParamError::Io(errno_of(&e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_lnet_ioctls_and_parameters() {
        let dir = std::env::temp_dir().join(format!("lnetctl-dev-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lnet_retry_count"), "2\n").unwrap();

        // A real ioctl(2) on a device that does not know the command.
        let mut be = DevLnet::with_paths(Path::new("/dev/null"), &dir);
        let mut a = abi::LnetIocGlobals::new();
        assert_eq!(be.ioctl(Request::GetGlobals(&mut a)), Err(Errno::ENOTTY));
        // No device at all: ENODEV, never ENOENT (which ends listings).
        let mut gone = DevLnet::with_paths(&dir.join("no-such-dev"), &dir);
        let mut n = abi::LnetIocNi::new();
        assert_eq!(gone.ioctl(Request::GetNi(&mut n)), Err(Errno::ENODEV));

        assert_eq!(be.read_param("lnet_retry_count").unwrap(), "2");
        be.write_param("lnet_retry_count", "3").unwrap();
        assert_eq!(be.read_param("lnet_retry_count").unwrap(), "3");
        assert_eq!(
            be.read_param("lnet_nope"),
            Err(ParamError::Open(Errno::ENOENT))
        );
        assert_eq!(
            be.write_param("lnet_nope", "1"),
            Err(ParamError::Open(Errno::ENOENT))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
