/** E-mails (RFC 5322, MIME) the tests write, so every header, body block and attachment is known. */

export interface MailAttachment {
  filename: string;
  type: string;
  bytes: Buffer;
}

/** A multipart/mixed message: an HTML body and the attachments (Base64), CRLF line ends. */
export function emlWithAttachments(p: {
  from: string;
  to: string;
  subject: string;
  date: string;
  html: string;
  attachments: MailAttachment[];
}): Buffer {
  const lines = [
    `From: ${p.from}`,
    `To: ${p.to}`,
    `Subject: ${p.subject}`,
    `Date: ${p.date}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    p.html,
  ];
  for (const a of p.attachments)
    lines.push(
      '--b1',
      `Content-Type: ${a.type}; name="${a.filename}"`,
      `Content-Disposition: attachment; filename="${a.filename}"`,
      'Content-Transfer-Encoding: base64',
      '',
      a.bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
    );
  lines.push('--b1--', '');
  return Buffer.from(lines.join('\r\n'));
}
