//! Who is at the other end of a connection, for the server's per-peer
//! limits: its address, and on loopback the local user who owns the
//! client's socket, asked of the kernel's socket table through
//! `NETLINK_SOCK_DIAG` (one exact lookup, as `ss` makes), so that one local
//! user cannot take the places of another (an agent, the CLI) on the same
//! address.

use std::mem::size_of;
use std::net::{IpAddr, SocketAddr};

/// One peer, as the server counts connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    /// A remote address (or a loopback one whose owner could not be found).
    Address(IpAddr),
    /// A local user, by uid: a connection over loopback.
    LocalUser(u32),
}

impl Peer {
    /// The peer of a connection from `peer` to `local` (this server's end).
    pub fn of(peer: SocketAddr, local: SocketAddr) -> Peer {
        let ip = peer.ip().to_canonical();
        if ip.is_loopback() {
            if let Some(uid) = socket_owner(SocketAddr::new(ip, peer.port()), local) {
                return Peer::LocalUser(uid);
            }
        }
        Peer::Address(ip)
    }
}

/// `struct nlmsghdr`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct NlMsgHdr {
    len: u32,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
}

/// `struct inet_diag_sockid`: ports and addresses in network byte order.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SockId {
    sport: [u8; 2],
    dport: [u8; 2],
    src: [u8; 16],
    dst: [u8; 16],
    interface: u32,
    cookie: [u32; 2],
}

/// `struct inet_diag_req_v2`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct DiagRequest {
    family: u8,
    protocol: u8,
    ext: u8,
    pad: u8,
    states: u32,
    id: SockId,
}

/// `struct inet_diag_msg`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct DiagMessage {
    family: u8,
    state: u8,
    timer: u8,
    retrans: u8,
    id: SockId,
    expires: u32,
    rqueue: u32,
    wqueue: u32,
    uid: u32,
    inode: u32,
}

/// A netlink request: its header, then the lookup.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Lookup {
    header: NlMsgHdr,
    request: DiagRequest,
}

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_NOCOOKIE: u32 = !0;
/// The TCP states in which a client's socket is still held open by its
/// process: `ESTABLISHED` and `CLOSE_WAIT` (`1 << TCP_…`). A socket its
/// process has closed lingers in the others (FIN-WAIT, TIME-WAIT…) with no
/// owner, and the kernel then reports it as root's.
const HELD_OPEN: u32 = (1 << 1) | (1 << 8);

fn socket_id(source: SocketAddr, destination: SocketAddr) -> SockId {
    let octets = |a: SocketAddr| match a.ip() {
        IpAddr::V4(v4) => {
            let mut out = [0u8; 16];
            out[..4].copy_from_slice(&v4.octets());
            out
        }
        IpAddr::V6(v6) => v6.octets(),
    };
    SockId {
        sport: source.port().to_be_bytes(),
        dport: destination.port().to_be_bytes(),
        src: octets(source),
        dst: octets(destination),
        interface: 0,
        cookie: [INET_DIAG_NOCOOKIE; 2],
    }
}

/// The uid owning the TCP socket bound to `source` and connected to
/// `destination` on this host, if the kernel says and a process still holds
/// the socket (an orphan, closed by its process, has no owner to name).
fn socket_owner(source: SocketAddr, destination: SocketAddr) -> Option<u32> {
    let destination = SocketAddr::new(destination.ip().to_canonical(), destination.port());
    let family = match (source, destination) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) => libc::AF_INET,
        (SocketAddr::V6(_), SocketAddr::V6(_)) => libc::AF_INET6,
        _ => return None,
    };
    let lookup = Lookup {
        header: NlMsgHdr {
            len: size_of::<Lookup>() as u32,
            kind: SOCK_DIAG_BY_FAMILY,
            flags: libc::NLM_F_REQUEST as u16,
            seq: 1,
            pid: 0,
        },
        request: DiagRequest {
            family: family as u8,
            protocol: libc::IPPROTO_TCP as u8,
            ext: 0,
            pad: 0,
            states: HELD_OPEN,
            id: socket_id(source, destination),
        },
    };
    // SAFETY: a socket is opened, used with buffers of the sizes given, and closed.
    unsafe {
        let fd = libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, libc::NETLINK_SOCK_DIAG);
        if fd < 0 {
            return None;
        }
        let mut kernel: libc::sockaddr_nl = std::mem::zeroed();
        kernel.nl_family = libc::AF_NETLINK as u16;
        let sent = libc::sendto(
            fd,
            (&lookup as *const Lookup).cast(),
            size_of::<Lookup>(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            size_of::<libc::sockaddr_nl>() as u32,
        );
        // Room for the answer (or an error carrying the request back), 8-byte aligned.
        let mut answer = [0u64; 64];
        let got = if sent == size_of::<Lookup>() as isize {
            libc::recv(fd, answer.as_mut_ptr().cast(), size_of::<[u64; 64]>(), 0)
        } else {
            -1
        };
        libc::close(fd);
        if got < (size_of::<NlMsgHdr>() + size_of::<DiagMessage>()) as isize {
            return None;
        }
        let header: NlMsgHdr = std::ptr::read_unaligned(answer.as_ptr().cast());
        if header.kind != SOCK_DIAG_BY_FAMILY {
            return None;
        }
        let message: DiagMessage =
            std::ptr::read_unaligned(answer.as_ptr().cast::<u8>().add(size_of::<NlMsgHdr>()).cast());
        // An inode of 0: no process holds the socket any more.
        (message.inode != 0).then_some(message.uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_loopback_peer_is_the_user_who_owns_its_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_end, from) = listener.accept().unwrap();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        assert_eq!(Peer::of(from, server_end.local_addr().unwrap()), Peer::LocalUser(me));
    }

    #[test]
    fn a_peer_that_closed_its_socket_is_its_address_not_root() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server_end, from) = listener.accept().unwrap();
        // Closed by its process, the client's end lingers (FIN-WAIT-2) with
        // no owner: the kernel names root, which must not be believed.
        drop(client);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(Peer::of(from, server_end.local_addr().unwrap()), Peer::Address(from.ip()));
    }

    #[test]
    fn a_peer_that_is_not_connected_here_is_its_address() {
        let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let unused: SocketAddr = "127.0.0.1:10".parse().unwrap();
        assert_eq!(Peer::of(nowhere, unused), Peer::Address(nowhere.ip()));
        let remote: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        assert_eq!(Peer::of(remote, unused), Peer::Address(remote.ip()));
    }
}
