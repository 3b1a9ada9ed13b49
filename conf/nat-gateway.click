// nat-gateway.click -- a NAPT gateway between a private network and the world.
//
//   private network        +------------- gateway -------------+        the world
//   198.18.10.0/24 ======= $LAN_DEV                    $WAN_DEV ======= outside_gw
//   (hosts use "inside"    inside 198.18.10.1     outside 198.19.20.1   198.19.20.2
//    as their router)      +-----------------------------------+        (next hop)
//
// Every flow from the inside leaves with the gateway's one public address, "outside":
//
// - TCP and UDP: IPRewriter maps the source address and port to outside and a port of
//   50000-65535 (the host's own port when it is free), and maps the replies back.
// - Pings: ICMPPingRewriter does the same with the echo identifier.
// - ICMP errors from the world about a mapped flow (a router's time exceeded, a host's
//   port unreachable: what traceroute sees) are translated back by ICMPRewriter.
// - FTP control connections (port 21) go through TCPRewriter, with FTPPortMapper in front:
//   a PORT command naming the inside host is rewritten to name outside and a port mapped
//   in IPRewriter, so the server's active-mode data connection comes back through the NAT.
// - TTLs are decremented in both directions, before rewriting; an expired packet is
//   answered with a time exceeded from the gateway's address on the side it came from,
//   quoting the packet as it was on that side (no inside address reaches the world).
// - Fragments are reassembled before rewriting (only a whole datagram has its ports), and
//   datagrams are fragmented again for the 1500-byte links on the way out.
//
// Nothing else is forwarded: packets from the world that match no mapping, inside ICMP
// errors (their outer source would reveal the inside address) and other protocols are
// dropped. The gateway answers pings to both of its addresses and ARP on both sides.
//
// Parameters (sluice nat-gateway.click NAME=VALUE ...): the devices, the interfaces'
// Ethernet addresses, and the UDP mapping timeout, guarantee and reap interval (seconds).
// The rewriters are wired as in Click's conf/mazu-nat.click.

define($LAN_DEV lan0, $LAN_ETH 02:00:00:00:0a:01,
       $WAN_DEV wan0, $WAN_ETH 02:00:00:00:14:01,
       $UDP_TIMEOUT 300, $UDP_GUARANTEE 5, $REAP_INTERVAL 60);

AddressInfo(
  inside      198.18.10.1  198.18.10.0/24  $LAN_ETH,
  outside     198.19.20.1  198.19.20.0/24  $WAN_ETH,
  outside_gw  198.19.20.2
);


// DEVICES

lan_in :: FromDevice($LAN_DEV);
lan_out :: Queue(1024) -> ToDevice($LAN_DEV);
wan_in :: FromDevice($WAN_DEV);
wan_out :: Queue(1024) -> ToDevice($WAN_DEV);


// ARP: answer for our address on each side; resolve next hops with ARPQuerier.

lan_class, wan_class :: Classifier(12/0806 20/0001,   // ARP request
                                   12/0806 20/0002,   // ARP reply
                                   12/0800,           // IP
                                   -);

lan_in -> HostEtherFilter(inside) -> lan_class;
wan_in -> HostEtherFilter(outside) -> wan_class;

lan_arpq :: ARPQuerier(inside) -> lan_out;
wan_arpq :: ARPQuerier(outside) -> wan_out;

lan_class[0] -> ARPResponder(inside) -> lan_out;
lan_class[1] -> [1]lan_arpq;
lan_class[3] -> Discard;
wan_class[0] -> ARPResponder(outside) -> wan_out;
wan_class[1] -> [1]wan_arpq;
wan_class[3] -> Discard;


// OUTPUT PATHS (IP packets with the destination in the header)

// Inside hosts are all on the private network.
to_lan :: GetIPAddress(16) -> IPFragmenter(1500) -> [0]lan_arpq;

// The world: our own network directly, everything else through the next hop.
to_wan :: GetIPAddress(16)
       -> StaticIPLookup(outside:ipnet 0, 0.0.0.0/0 outside_gw 0)
       -> IPFragmenter(1500)
       -> [0]wan_arpq;


// REWRITERS (output 0: to the world; output 1: back to the inside)

IPRewriterPatterns(to_world outside 50000-65535 - -);

rw :: IPRewriter(pattern to_world 0 1,      // input 0: TCP and UDP from the inside
                 drop,                      // input 1: from the world, replies only
                 UDP_TIMEOUT $UDP_TIMEOUT, UDP_GUARANTEE $UDP_GUARANTEE,
                 REAP_INTERVAL $REAP_INTERVAL);

// FTP control connections only: FTPPortMapper records the length changes it makes to
// their PORT commands on these mappings, and TCPRewriter moves the sequence numbers.
// (Its flows all go to port 21, IPRewriter's never do, so sharing the port range is safe.)
tcp_rw :: TCPRewriter(pattern to_world 0 1, drop);

pr :: ICMPPingRewriter(pattern to_world 0 1, drop);

rw[0] -> to_wan;
rw[1] -> to_lan;
tcp_rw[0] -> to_wan;
tcp_rw[1] -> to_lan;
pr[0] -> to_wan;
pr[1] -> to_lan;


// FROM THE INSIDE

lan_class[2] -> Strip(14)
       -> CheckIPHeader
       -> from_lan :: IPClassifier(dst host inside,    // the gateway itself
                                   dst net inside,     // inside traffic, broadcasts
                                   -);                 // the world

from_lan[0] -> lan_ping :: ICMPPingResponder -> to_lan;
lan_ping[1] -> Discard;
from_lan[1] -> Discard;

from_lan[2] -> IPReassembler
       -> lan_ttl :: DecIPTTL
       -> outbound :: IPClassifier(dst tcp port ftp, tcp or udp, icmp type echo, -);
lan_ttl[1] -> ICMPError(inside, timeexceeded) -> to_lan;

outbound[0] -> ftp_ports :: FTPPortMapper(tcp_rw, rw, 0) -> [0]tcp_rw;
outbound[1] -> [0]rw;
outbound[2] -> [0]pr;
outbound[3] -> Discard;         // inside ICMP errors, other ICMP, other protocols


// FROM THE WORLD

wan_class[2] -> Strip(14)
       -> CheckIPHeader
       -> from_wan :: IPClassifier(dst host outside and icmp type echo,   // pings of us
                                   dst host outside,                       // to mappings?
                                   -);                                     // not ours

from_wan[0] -> ICMPPingResponder -> to_wan;
from_wan[2] -> Discard;

from_wan[1] -> IPReassembler
       -> wan_ttl :: DecIPTTL
       -> inbound :: IPClassifier(src tcp port ftp,      // FTP control replies
                                  tcp or udp,
                                  icmp type echo-reply,
                                  icmp,                  // errors about mapped flows
                                  -);
wan_ttl[1] -> ICMPError(outside, timeexceeded) -> to_wan;

inbound[0] -> [1]tcp_rw;
inbound[1] -> [1]rw;
inbound[2] -> [1]pr;
inbound[3] -> icmp_rw :: ICMPRewriter(tcp_rw rw pr) -> to_lan;
icmp_rw[1] -> Discard;
inbound[4] -> Discard;          // other protocols
