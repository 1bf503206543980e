package ui

import (
	"strconv"
	"strings"
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

// SubmissionsText is the plain-text body of a notification mail.
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
			b.WriteString("  " + f.Name + ": " + f.Value + "\n")
		}
		b.WriteString("\n")
	}
	if p.Total > len(p.Items) {
		b.WriteString("And " + strconv.Itoa(p.Total-len(p.Items)) + " more.\n\n")
	}
	b.WriteString("Site: " + p.SiteURL + "\nAll submissions: " + p.ListURL + "\n")
	return b.String()
}
