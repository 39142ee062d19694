package loopback

import "testing"

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "app.localhost": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "::ffff:127.0.0.1": true, "fe80::1%eth0": false, "::1%lo": true,
		"": false, "localhost.example.com": false, "notlocalhost": false, "10.0.0.1": false, "0.0.0.0": false,
		"::": false, "example.com": false, "128.0.0.1": false,
	} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for hp, want := range map[string]bool{
		"localhost:8080": true, "127.0.0.1:1": true, "[::1]:80": true, "app.localhost:3000": true, "localhost": true,
		"[::1]": true, "evil.com:80": false, "evil.com": false, "10.1.1.1:80": false, ":80": false,
	} {
		if got := HostPort(hp); got != want {
			t.Errorf("HostPort(%q) = %v, want %v", hp, got, want)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:0": true, "[::1]:80": true, "127.0.0.2:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:80": false, "app.localhost:80": false, "127.0.0.1": false,
		"192.168.1.2:80": false, "example.com:80": false, "": false,
	} {
		if got := ListenAddr(addr); got != want {
			t.Errorf("ListenAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
