package hooks

// A tiny in-process SMTP receiver for tests that send real mail over TCP.
// It speaks just enough of RFC 5321 for net/smtp-based clients (mailyak,
// which PocketBase's SMTPClient uses): EHLO/HELO, MAIL FROM, RCPT TO, DATA
// (with dot-unstuffing), RSET, NOOP and QUIT. It advertises neither
// STARTTLS nor AUTH, so clients talk plain text and never authenticate.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"sync"
	"testing"
	"time"
)

// smtpMail is one message the receiver accepted.
type smtpMail struct {
	From string   // MAIL FROM address
	To   []string // RCPT TO addresses
	Data []byte   // the message as sent after DATA, dot-unstuffed, CRLF lines
}

// smtpReceiver is an SMTP server on 127.0.0.1 that stores what it receives.
// It is safe for concurrent use.
type smtpReceiver struct {
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	mails  []smtpMail
	errs   []error // protocol errors seen, for failure messages
}

// smtpdLineLimit bounds one command or data line (RFC 5321 says 1000 with
// CRLF; be lenient).
const smtpdLineLimit = 64 << 10

// newSMTPReceiver starts a receiver on a free loopback port; it stops when
// the test ends.
func newSMTPReceiver(t testing.TB) *smtpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp receiver: %v", err)
	}
	r := &smtpReceiver{ln: ln, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.acceptLoop()
	t.Cleanup(r.close)
	return r
}

// Port is the TCP port the receiver listens on.
func (r *smtpReceiver) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// Mails returns a copy of the messages received so far.
func (r *smtpReceiver) Mails() []smtpMail {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]smtpMail, len(r.mails))
	copy(out, r.mails)
	return out
}

// Errors returns the protocol errors seen so far.
func (r *smtpReceiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// waitMailTo polls until a message for rcpt has arrived and returns the
// latest such message; it fails the test after timeout.
func (r *smtpReceiver) waitMailTo(t testing.TB, rcpt string, timeout time.Duration) smtpMail {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		mails := r.Mails()
		for i := len(mails) - 1; i >= 0; i-- {
			for _, to := range mails[i].To {
				if strings.EqualFold(to, rcpt) {
					return mails[i]
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail for %s within %v (received %d, protocol errors %v)", rcpt, timeout, len(mails), r.Errors())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *smtpReceiver) close() {
	r.mu.Lock()
	r.closed = true
	r.ln.Close()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *smtpReceiver) acceptLoop() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			c.Close()
			return
		}
		r.conns[c] = struct{}{}
		r.wg.Add(1)
		r.mu.Unlock()
		go func() {
			defer r.wg.Done()
			defer func() {
				c.Close()
				r.mu.Lock()
				delete(r.conns, c)
				r.mu.Unlock()
			}()
			if err := r.session(c); err != nil && !errors.Is(err, net.ErrClosed) {
				r.mu.Lock()
				r.errs = append(r.errs, err)
				r.mu.Unlock()
			}
		}()
	}
}

// session runs the SMTP conversation of one connection.
func (r *smtpReceiver) session(c net.Conn) error {
	br := bufio.NewReaderSize(c, 4096)
	w := bufio.NewWriter(c)
	reply := func(lines ...string) error {
		for _, l := range lines {
			if _, err := w.WriteString(l + "\r\n"); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	readLine := func() (string, error) {
		// a generous deadline so that a stuck client cannot hang the test
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var line []byte
		for {
			chunk, more, err := br.ReadLine()
			if err != nil {
				return "", err
			}
			line = append(line, chunk...)
			if len(line) > smtpdLineLimit {
				return "", errors.New("smtp: line too long")
			}
			if !more {
				return string(line), nil
			}
		}
	}

	if err := reply("220 sitedrop-test ESMTP ready"); err != nil {
		return err
	}
	var (
		greeted bool
		from    string
		hasFrom bool
		rcpts   []string
	)
	reset := func() { from, hasFrom, rcpts = "", false, nil }
	for {
		line, err := readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		arg = strings.TrimSpace(arg)
		switch verb {
		case "EHLO":
			greeted = true
			reset()
			// no STARTTLS, no AUTH
			err = reply("250-sitedrop-test greets "+arg, "250-8BITMIME", "250 SIZE 10485760")
		case "HELO":
			greeted = true
			reset()
			err = reply("250 sitedrop-test")
		case "MAIL":
			addr, ok := smtpPath(arg, "FROM:")
			switch {
			case !greeted:
				err = reply("503 5.5.1 Send EHLO or HELO first")
			case hasFrom:
				err = reply("503 5.5.1 Nested MAIL command")
			case !ok:
				err = reply("501 5.5.4 Syntax: MAIL FROM:<address>")
			default:
				from, hasFrom, rcpts = addr, true, nil
				err = reply("250 2.1.0 OK")
			}
		case "RCPT":
			addr, ok := smtpPath(arg, "TO:")
			switch {
			case !hasFrom:
				err = reply("503 5.5.1 Need MAIL before RCPT")
			case !ok || addr == "":
				err = reply("501 5.5.4 Syntax: RCPT TO:<address>")
			default:
				rcpts = append(rcpts, addr)
				err = reply("250 2.1.5 OK")
			}
		case "DATA":
			if len(rcpts) == 0 {
				err = reply("503 5.5.1 Need RCPT before DATA")
				break
			}
			if err = reply("354 End data with <CR><LF>.<CR><LF>"); err != nil {
				return err
			}
			var data bytes.Buffer
			for {
				l, err := readLine()
				if err != nil {
					return fmt.Errorf("smtp: reading DATA: %w", err)
				}
				if l == "." {
					break
				}
				l = strings.TrimPrefix(l, ".") // dot-unstuffing (RFC 5321 4.5.2)
				data.WriteString(l)
				data.WriteString("\r\n")
			}
			r.mu.Lock()
			r.mails = append(r.mails, smtpMail{From: from, To: rcpts, Data: data.Bytes()})
			n := len(r.mails)
			r.mu.Unlock()
			reset()
			err = reply(fmt.Sprintf("250 2.0.0 OK queued as %d", n))
		case "RSET":
			reset()
			err = reply("250 2.0.0 OK")
		case "NOOP":
			err = reply("250 2.0.0 OK")
		case "QUIT":
			reply("221 2.0.0 Bye")
			return nil
		case "STARTTLS", "AUTH", "VRFY", "EXPN", "HELP", "TURN", "BDAT":
			err = reply("502 5.5.1 Command not implemented")
		default:
			err = reply("500 5.5.2 Command not recognized")
		}
		if err != nil {
			return err
		}
	}
}

// smtpPath reads "FROM:<addr> [params]" (prefix "FROM:" or "TO:", any
// case, optional space before "<") and returns addr.
func smtpPath(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// parsedMail is a received message taken apart: headers and the decoded
// text and HTML bodies.
type parsedMail struct {
	Header  mail.Header
	From    []*mail.Address
	To      []*mail.Address
	Subject string
	Text    string
	HTML    string
}

// parseMail parses a received message; it walks nested multipart bodies
// (mailyak wraps multipart/alternative in multipart/mixed) and decodes
// quoted-printable and base64 parts.
func parseMail(t testing.TB, data []byte) parsedMail {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parse mail: %v\n%s", err, data)
	}
	var p parsedMail
	p.Header = m.Header
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatalf("subject %q: %v", m.Header.Get("Subject"), err)
	}
	if p.From, err = m.Header.AddressList("From"); err != nil {
		t.Fatalf("From %q: %v", m.Header.Get("From"), err)
	}
	if p.To, err = m.Header.AddressList("To"); err != nil {
		t.Fatalf("To %q: %v", m.Header.Get("To"), err)
	}
	err = walkMailPart(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body, &p)
	if err != nil {
		t.Fatalf("mail body: %v\n%s", err, data)
	}
	return p
}

func walkMailPart(ctype, cte string, body io.Reader, p *parsedMail) error {
	if ctype == "" {
		ctype = "text/plain; charset=us-ascii"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("content type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			// NextRawPart keeps Content-Transfer-Encoding: decoding is ours
			part, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := walkMailPart(part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part, p); err != nil {
				return err
			}
		}
	}
	var rd io.Reader = body
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		rd = quotedprintable.NewReader(body)
	case "base64":
		rd = base64.NewDecoder(base64.StdEncoding, body) // skips line breaks
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	switch mt {
	case "text/plain":
		p.Text += string(b)
	case "text/html":
		p.HTML += string(b)
	}
	return nil
}

// TestSMTPReceiver checks the receiver itself with the standard client:
// no STARTTLS or AUTH on offer, dot-unstuffing, RSET and NOOP.
func TestSMTPReceiver(t *testing.T) {
	t.Parallel()
	rcv := newSMTPReceiver(t)
	c, err := smtp.Dial(rcv.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"STARTTLS", "AUTH"} {
		if ok, _ := c.Extension(ext); ok {
			t.Fatalf("the receiver offers %s", ext)
		}
	}
	if err := c.Mail("dropped@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := c.Noop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("nobody@example.com"); err == nil {
		t.Fatal("RCPT without MAIL was accepted")
	}
	if err := c.Mail("from@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"a@example.com", "b@example.com"} {
		if err := c.Rcpt(to); err != nil {
			t.Fatal(err)
		}
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	const body = "Subject: dots\r\n\r\n.leading dot\r\n..two dots\r\n.\r\nend\r\n"
	if _, err := io.WriteString(w, body); err != nil { // the client dot-stuffs
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	mails := rcv.Mails()
	if len(mails) != 1 {
		t.Fatalf("%d mails, want 1", len(mails))
	}
	m := mails[0]
	if m.From != "from@example.com" || strings.Join(m.To, ",") != "a@example.com,b@example.com" {
		t.Fatalf("envelope from %q to %v", m.From, m.To)
	}
	if string(m.Data) != body {
		t.Fatalf("data %q, want %q", m.Data, body)
	}
	if errs := rcv.Errors(); len(errs) != 0 {
		t.Fatalf("protocol errors: %v", errs)
	}
}
