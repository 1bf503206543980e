package ui

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LoginCodeMailSubject is the subject line of the sign-in code e-mail.
const LoginCodeMailSubject = "Your sitedrop sign-in code"

// LoginCodeText is the plain-text body of the sign-in code e-mail, the
// alternative to LoginCodeMail.
func LoginCodeText(p LoginCodeMailProps) string {
	return "Your sitedrop sign-in code\n\n" +
		"    " + p.Code + "\n\n" +
		"It expires in " + strconv.Itoa(p.Minutes) + " minutes. If you did not ask for it, ignore this e-mail.\n\n" +
		"Sent by the sitedrop server at " + p.WebURL + "\n"
}

// NoAccountMailSubject is the subject line of the "no account" e-mail.
const NoAccountMailSubject = "Sign-in to sitedrop"

// NoAccountText is the plain-text body of the "no account" e-mail.
func NoAccountText(p NoAccountMailProps) string {
	return "Sign-in to sitedrop\n\n" +
		"Someone asked to sign in with this address, but it has no account on this server, " +
		"and this server does not open new accounts.\n\n" +
		"If that was you, ask the server's administrator for an account. Otherwise, ignore this e-mail.\n\n" +
		"Sent by the sitedrop server at " + p.WebURL + "\n"
}

// SubmissionsText is the plain-text body of a notification mail. Each
// submission starts with its time at the start of a line, each field is
// "  name: value", and the further lines of a multi-line name or value are
// indented by four: what a submitter sends cannot make a line that reads as
// another field, another submission or anything else of the mail's own.
func SubmissionsText(p SubmissionsMailProps) string {
	var b strings.Builder
	if p.Total == 1 {
		b.WriteString("New submission on " + p.Slug + "\n\n")
	} else {
		b.WriteString(strconv.Itoa(p.Total) + " new submissions on " + p.Slug + "\n\n")
	}
	for _, it := range p.Items {
		b.WriteString(it.CreatedAt + "\n")
		for _, f := range it.Fields {
			// a submitter's line breaks cannot start a line of their own:
			// fields are indented by two, their continuation lines by four
			for i, line := range mailLines(f.Name + ": " + f.Value) {
				if i == 0 {
					b.WriteString("  " + line + "\n")
				} else {
					b.WriteString("    " + line + "\n")
				}
			}
		}
		b.WriteString("\n")
	}
	if p.Total > len(p.Items) {
		b.WriteString("And " + strconv.Itoa(p.Total-len(p.Items)) + " more.\n\n")
	}
	b.WriteString("Site: " + p.SiteURL + "\nAll submissions: " + p.ListURL + "\n")
	return b.String()
}

// mailLines splits submitted text into the lines a mail client shows: at
// CR LF, CR, LF, VT, FF, NEL, U+2028 and U+2029. Other control characters
// (tab excepted) and invalid UTF-8 become U+FFFD.
func mailLines(s string) []string {
	var lines []string
	var b strings.Builder
	prevCR := false
	for _, r := range s {
		if prevCR && r == '\n' {
			prevCR = false
			continue // the LF of a CR LF
		}
		prevCR = r == '\r'
		switch {
		case r == '\r', r == '\n', r == '\v', r == '\f', r == 0x85, r == 0x2028, r == 0x2029:
			lines = append(lines, b.String())
			b.Reset()
		case r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r) // invalid UTF-8 is ranged over as utf8.RuneError
		}
	}
	return append(lines, b.String())
}

// mailText is submitted text for the HTML part of a mail: mailLines joined
// by LF, which HTML shows as white space inside the field's paragraph.
func mailText(s string) string {
	return strings.Join(mailLines(s), "\n")
}

// TakedownMailSubject is the subject line of the takedown (or restore)
// e-mail.
func TakedownMailSubject(p TakedownMailProps) string {
	if p.Reason == "" {
		return "Your site " + p.Slug + " was restored"
	}
	return "Your site " + p.Slug + " was taken down"
}

// TakedownText is the plain-text body of the takedown (or restore)
// e-mail, the alternative to TakedownMail. The reason, an
// administrator's, is one line of text (sites.CheckTakedownReason).
func TakedownText(p TakedownMailProps) string {
	var b strings.Builder
	b.WriteString(TakedownMailSubject(p) + "\n\n")
	if p.Reason != "" {
		b.WriteString("An administrator of this server took your site " + p.Slug + " (" + p.SiteURL + ") down.\n" +
			"Its visitors now see \"This site was taken down for: " + p.Reason + "\".\n\n" +
			"Its address, versions and data are kept, but it cannot be redeployed, renamed, resumed or promoted " +
			"until it is restored. If you think this is a mistake, reply to the server's administrator.\n\n")
	} else {
		b.WriteString("An administrator of this server restored your site " + p.Slug + " (" + p.SiteURL + "): " +
			"it is served again and takes deploys.\n\n")
	}
	b.WriteString("The site's page: " + p.PageURL + "\n\nSent by the sitedrop server at " + p.WebURL + "\n")
	return b.String()
}

// BanMailSubject is the subject line of the ban (or lifted ban) e-mail.
func BanMailSubject(p BanMailProps) string {
	if p.Reason == "" {
		return "The ban of your account was lifted"
	}
	return "Your account was banned"
}

// banLead is the first paragraph of the ban's e-mail, before its list
// of sites.
func banLead(p BanMailProps) string {
	n := len(p.Sites)
	if p.Reason == "" {
		return "An administrator of this server lifted the ban of your account. Its " + Plural(n, "site") + " below " +
			isAre(n) + " served again and take deploys."
	}
	return "An administrator of this server banned your account for: " + p.Reason + ". Its " + Plural(n, "site") + " below " +
		isAre(n) + " taken down: visitors see \"This site was taken down for: " + p.Reason + "\"."
}

// isAre is the verb of n things.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// BanText is the plain-text body of the ban (or lifted ban) e-mail, the
// alternative to BanMail. The reason, an administrator's, is one line of
// text (sites.CheckBanReason).
func BanText(p BanMailProps) string {
	var b strings.Builder
	b.WriteString(BanMailSubject(p) + "\n\n")
	b.WriteString(banLead(p) + "\n\n")
	for _, s := range p.Sites {
		b.WriteString("  " + s.Slug + " (" + s.SiteURL + ")\n")
	}
	b.WriteString("\n")
	if p.Reason != "" {
		b.WriteString("Their addresses, versions and data are kept. If you think this is a mistake, reply to the server's administrator.\n\n")
	}
	b.WriteString("Your account: " + p.AccountURL + "\n\nSent by the sitedrop server at " + p.WebURL + "\n")
	return b.String()
}

// ReportsText is the plain-text body of the admins' mail of new abuse
// reports. A reporter's line breaks cannot start a line of their own:
// continuation lines are indented.
func ReportsText(p ReportsMailProps) string {
	var b strings.Builder
	b.WriteString(ReportsMailSubject(p) + "\n\n")
	indented := func(label, s string) {
		for i, line := range mailLines(s) {
			if i == 0 {
				b.WriteString("  " + label + line + "\n")
			} else {
				b.WriteString("    " + line + "\n")
			}
		}
	}
	for _, it := range p.Items {
		b.WriteString(it.CreatedAt + " " + it.Reason + " (site " + it.Slug + ")\n")
		indented("URL: ", it.URL)
		if it.Details != "" {
			indented("Details: ", it.Details)
		}
		if it.Email != "" {
			indented("Reporter: ", it.Email)
		}
		b.WriteString("  Open: " + it.AdminURL + "\n\n")
	}
	if p.Total > len(p.Items) {
		b.WriteString("And " + strconv.Itoa(p.Total-len(p.Items)) + " more.\n\n")
	}
	b.WriteString(strconv.Itoa(p.Open) + " open in the queue: " + p.QueueURL + "\n")
	return b.String()
}
