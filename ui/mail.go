package ui

import "strconv"

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
