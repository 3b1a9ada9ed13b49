# Scenarios with Sluice as an IPsec security gateway (conf/esp-gateway.click): two host
# networks joined by an ESP tunnel between two gateways, each in its own namespace.
#
#   h1 (198.18.1.2) -- ra [gateway A: Sluice] rb -- ta [gateway B] tb -- h2 (198.18.2.2)
#                              198.18.100.1          198.18.100.2
#
# Gateway B is a second Sluice, or Linux's own IPsec (ip xfrm state/policy) where the kernel
# has ESP. The hosts ping and transfer over TCP both ways; on the link between the gateways
# tshark must see ESP between the gateways' addresses and nothing of the hosts', and must
# itself decrypt the ESP (an independent implementation) back to the hosts' packets.

GW_A=198.18.100.1 GW_B=198.18.100.2
GCM_KEY_AB=0x4a9f2e1c7b3d5a6e8f0112233445566778899aab
GCM_KEY_BA=0x0f1e2d3c4b5a69788796a5b4c3d2e1f001020304
CBC_ENC_AB=0x00112233445566778899aabbccddeeff CBC_AUTH_AB=0x0123456789abcdef0123456789abcdef01234567
CBC_ENC_BA=0xffeeddccbbaa99887766554433221100 CBC_AUTH_BA=0x76543210fedcba9876543210fedcba9876543210

# Key files for ALG: $NETNS_TMP/ab.keys (A to B, SPI 0x1001) and ba.keys (B to A, 0x2001).
write_keys() {
  if [ "$1" = aes-gcm-128 ]; then
    echo "aead $GCM_KEY_AB" >"$NETNS_TMP/ab.keys"
    echo "aead $GCM_KEY_BA" >"$NETNS_TMP/ba.keys"
  else
    printf 'enc %s\nauth %s\n' $CBC_ENC_AB $CBC_AUTH_AB >"$NETNS_TMP/ab.keys"
    printf 'enc %s\nauth %s\n' $CBC_ENC_BA $CBC_AUTH_BA >"$NETNS_TMP/ba.keys"
  fi
}

topo_tunnel() {
  ns_add h1 && router_ns ga && ns_add gb && ns_add h2 || return 1
  veth_link h1 eth0 ga ra && veth_link ga rb gb ta && veth_link gb tb h2 eth0 || return 1
  addr h1 eth0 198.18.1.2/24 && addr h2 eth0 198.18.2.2/24
  nsx h1 ip route add default via 198.18.1.1
  nsx h2 ip route add default via 198.18.2.1
  host_tune h1 eth0; host_tune h2 eth0
  router_tune ga ra; router_tune ga rb; router_tune gb ta; router_tune gb tb
}

# Gateway A: Sluice on conf/esp-gateway.click with ALG.
start_gateway_a() {
  local alg="$1"
  sluice_start ga "$(cat conf/esp-gateway.click)" \
    IN_MAC="$(mac_of ga ra)" OUT_MAC="$(mac_of ga rb)" ALG="$alg" \
    OUT_KEYS="$NETNS_TMP/ab.keys" IN_KEYS="$NETNS_TMP/ba.keys" -p 47101
}

# Gateway B as a second Sluice: the mirror image of A.
start_gateway_b_sluice() {
  local alg="$1"
  nsx gb sysctl -qw net.ipv4.ip_forward=0
  nsbg gb "$(sluice_bin)" -f conf/esp-gateway.click IN_IF=tb OUT_IF=ta \
    IN_MAC="$(mac_of gb tb)" OUT_MAC="$(mac_of gb ta)" IN_ADDR=198.18.2.1 \
    LOCAL_NET=198.18.2.0/24 OUT_ADDR=$GW_B PEER=$GW_A REMOTE_NET=198.18.1.0/24 ALG="$alg" \
    OUT_SPI=0x2001 OUT_KEYS="$NETNS_TMP/ba.keys" IN_SPI=0x1001 IN_KEYS="$NETNS_TMP/ab.keys" \
    >"$NETNS_TMP/gb.log" 2>&1 >/dev/null
  sleep 0.5
}

# The `ip xfrm state` algorithm arguments for ALG, direction ab or ba, into array XFRM.
xfrm_alg() {
  if [ "$1" = aes-gcm-128 ]; then
    local k=$GCM_KEY_AB; [ "$2" = ba ] && k=$GCM_KEY_BA
    XFRM=(aead 'rfc4106(gcm(aes))' "$k" 128)
  else
    local e=$CBC_ENC_AB a=$CBC_AUTH_AB; [ "$2" = ba ] && e=$CBC_ENC_BA a=$CBC_AUTH_BA
    XFRM=(enc 'cbc(aes)' "$e" auth-trunc 'hmac(sha1)' "$a" 96)
  fi
}

# True if this kernel can hold ESP states with ALG.
kernel_has_esp() {
  ns_add probe || return 1
  xfrm_alg "$1" ab
  nsx probe ip xfrm state add src $GW_A dst $GW_B proto esp spi 0x1001 mode tunnel "${XFRM[@]}" 2>/dev/null
}

# Gateway B as Linux: forwarding on, addresses on its interfaces, xfrm states and policies.
start_gateway_b_linux() {
  local alg="$1"
  nsx gb sysctl -qw net.ipv4.ip_forward=1
  addr gb ta $GW_B/24 && addr gb tb 198.18.2.1/24 || return 1
  nsx gb ip route add 198.18.1.0/24 via $GW_A
  xfrm_alg "$alg" ab
  nsx gb ip xfrm state add src $GW_A dst $GW_B proto esp spi 0x1001 mode tunnel \
    replay-window 64 "${XFRM[@]}" || return 1
  xfrm_alg "$alg" ba
  nsx gb ip xfrm state add src $GW_B dst $GW_A proto esp spi 0x2001 mode tunnel "${XFRM[@]}" || return 1
  nsx gb ip xfrm policy add src 198.18.2.0/24 dst 198.18.1.0/24 dir out \
    tmpl src $GW_B dst $GW_A proto esp mode tunnel || return 1
  for dir in in fwd; do
    nsx gb ip xfrm policy add src 198.18.1.0/24 dst 198.18.2.0/24 dir $dir \
      tmpl src $GW_A dst $GW_B proto esp mode tunnel || return 1
  done
}

# 4 MB over TCP from host FROM to host TO (listening at ADDR); the hashes must agree.
tcp_both_ways() {
  local from to dst a b
  head -c 4000000 /dev/urandom >"$NETNS_TMP/data"
  for pair in "h1 h2 198.18.2.2" "h2 h1 198.18.1.2"; do
    read -r from to dst <<<"$pair"
    rm -f "$NETNS_TMP/recv"
    nsbg "$to" sh -c "nc -l -N 5001 > $NETNS_TMP/recv" >/dev/null
    sleep 0.3
    nsx "$from" timeout 30 nc -N "$dst" 5001 <"$NETNS_TMP/data" || { fail "nc $from -> $to"; return 1; }
    for _ in $(seq 50); do
      [ "$(stat -c %s "$NETNS_TMP/recv" 2>/dev/null)" = 4000000 ] && break
      sleep 0.1
    done
    a=$(sha256sum <"$NETNS_TMP/data") b=$(sha256sum <"$NETNS_TMP/recv")
    [ "$a" = "$b" ] || { fail "TCP $from -> $to: received data differs"; return 1; }
    echo "TCP $from -> $to: 4 MB, same sha256"
  done
}

# tshark's ESP SA table (its esp_sa preference file) for ALG: A to B and B to A.
tshark_sas() {
  local alg="$1" enc auth
  if [ "$alg" = aes-gcm-128 ]; then
    enc="AES-GCM with 16 octet ICV [RFC4106]" auth="NULL"
    printf '"IPv4","%s","%s","0x00001001","%s","%s","%s",""\n' $GW_A $GW_B "$enc" $GCM_KEY_AB $auth
    printf '"IPv4","%s","%s","0x00002001","%s","%s","%s",""\n' $GW_B $GW_A "$enc" $GCM_KEY_BA $auth
  else
    enc="AES-CBC [RFC3602]" auth="HMAC-SHA-1-96 [RFC2404]"
    printf '"IPv4","%s","%s","0x00001001","%s","%s","%s","%s"\n' $GW_A $GW_B "$enc" $CBC_ENC_AB "$auth" $CBC_AUTH_AB
    printf '"IPv4","%s","%s","0x00002001","%s","%s","%s","%s"\n' $GW_B $GW_A "$enc" $CBC_ENC_BA "$auth" $CBC_AUTH_BA
  fi
}

# The whole check for gateway B of KIND (sluice or linux) and ALG.
run_tunnel() {
  local kind="$1" alg="$2" cap="$NETNS_TMP/transit.pcap" out
  topo_tunnel || return 1
  write_keys "$alg"
  start_gateway_a "$alg" || return 1
  "start_gateway_b_$kind" "$alg" || { fail "gateway B ($kind)"; return 1; }
  # Each side captures what arrives from the other (Sluice's own transmissions bypass the
  # sending namespace's packet taps); the two captures are merged.
  nsbg ga timeout 60 tcpdump -q -U --immediate-mode -i rb -w "$cap.a" >/dev/null 2>&1
  nsbg gb timeout 60 tcpdump -q -U --immediate-mode -i ta -w "$cap.b" >/dev/null 2>&1
  sleep 1
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.2.2 || { fail "ping h1 -> h2"; return 1; }
  nsx h2 ping -c 3 -i 0.2 -W 2 198.18.1.2 || { fail "ping h2 -> h1"; return 1; }
  nsx h1 ping -c 3 -s 1472 -W 2 198.18.2.2 || { fail "1500-byte pings (fragmented ESP)"; return 1; }
  tcp_both_ways || return 1
  sleep 0.5
  for p in $(ip netns pids "$(ns_name ga)") $(ip netns pids "$(ns_name gb)"); do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = tcpdump ] && kill -INT "$p"
  done
  sleep 0.5
  mergecap -w "$cap" "$cap.a" "$cap.b" || { fail "mergecap"; return 1; }
  # Every IPv4 packet on the transit link is ESP between the gateways.
  out=$(tshark -r "$cap" -Y ip -T fields -e ip.src -e ip.dst -e ip.proto 2>/dev/null | sort | uniq -c)
  echo "$out"
  [ -n "$out" ] || { fail "nothing captured"; return 1; }
  grep -vqE " ($GW_A	$GW_B|$GW_B	$GW_A)	50$" <<<"$out" && { fail "non-ESP traffic on the transit link"; return 1; }
  # tshark's own ESP decryption: every ICV correct, the hosts' packets inside.
  mkdir -p "$NETNS_TMP/wshark"
  tshark_sas "$alg" >"$NETNS_TMP/wshark/esp_sa"
  out=$(WIRESHARK_CONFIG_DIR="$NETNS_TMP/wshark" tshark -r "$cap" -Y esp -T fields \
    -o esp.enable_encryption_decode:TRUE -o esp.enable_authentication_check:TRUE \
    -e esp.spi -e esp.icv_good -e ip.src 2>/dev/null)
  echo "$out" | awk '{print $1, "icv_good=" $2}' | sort | uniq -c
  [ -z "$(awk '$2 != "1"' <<<"$out")" ] || { fail "tshark found ESP with a bad ICV"; return 1; }
  grep -qF "$GW_A,198.18.1.2" <<<"$out" && grep -qF "$GW_B,198.18.2.2" <<<"$out" \
    || { fail "tshark did not find the hosts' packets inside the ESP"; return 1; }
  sluice_alive || fail "gateway A died"
}

test_ipsec_sluice_to_sluice_gcm() { run_tunnel sluice aes-gcm-128; }
test_ipsec_sluice_to_sluice_cbc_sha1() { run_tunnel sluice aes-cbc-128-hmac-sha1; }

# With Linux's IPsec as gateway B. The kernel must have ESP and the ciphers; a kernel built
# without them (CONFIG_INET_ESP, CONFIG_CRYPTO_GCM) cannot run it, and the run lists it as not
# run with that reason.
linux_gateway() {
  kernel_has_esp "$1" || { echo "this kernel has no ESP with $1 (CONFIG_INET_ESP): Linux's IPsec cannot be the peer"; exit 77; }
  run_tunnel linux "$1"
}
test_ipsec_sluice_to_linux_gcm() { linux_gateway aes-gcm-128; }
test_ipsec_sluice_to_linux_cbc_sha1() { linux_gateway aes-cbc-128-hmac-sha1; }
