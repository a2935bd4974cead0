<?php
// Loads the client without Composer's registry: Guzzle and PSR-7 from Debian's php-guzzlehttp-guzzle and
// php-guzzlehttp-psr7 (on PHP's include_path), the client's own classes from `composer dump-autoload`.
// With Guzzle installed by Composer instead (`composer install`), vendor/autoload.php loads both.
if (!class_exists(\GuzzleHttp\Client::class)) {
    require_once 'GuzzleHttp/autoload.php';
}
require_once __DIR__ . '/vendor/autoload.php';
