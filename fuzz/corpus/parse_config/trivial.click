FromDevice(eth0) -> Counter -> Discard;
