package main

import (
	"net"
	"testing"
)

func TestShareHost(t *testing.T) {
	ipnet := func(s string) net.Addr {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		ip, _, _ := net.ParseCIDR(s)
		n.IP = ip
		return n
	}
	lo, v4, ll6, v6 := ipnet("127.0.0.1/8"), ipnet("192.168.1.5/24"), ipnet("fe80::1/64"), ipnet("2001:db8::5/64")
	for _, c := range []struct {
		addrs []net.Addr
		host  string
		want  string
	}{
		{[]net.Addr{lo, ll6, v6, v4}, "box", "192.168.1.5"},
		{[]net.Addr{lo, ll6, v6}, "box", "2001:db8::5"},
		{[]net.Addr{lo, ll6}, "box", "box"},
		{nil, "", "localhost"},
	} {
		if got := shareHost(c.addrs, c.host); got != c.want {
			t.Errorf("shareHost(%v, %q) = %q, want %q", c.addrs, c.host, got, c.want)
		}
	}
}
